"""The C text of the native level engine: a fixed runtime, then the design's rules as loops.

The runtime holds what every design shares: the seen set (open-addressing tables of key
hashes, found through a directory by the hash's first bits, each table growing or
splitting on its own; linear probing, each probe's memory fetched a few keys ahead), the
buffers of a level's new states, and a radix sort that puts them in key order. The rules
come after it, written from the same symbolic evaluation as the numba loops
(`model.check.kernels`): each guard, effect and property condition is the rules' own term,
printed as C (the Promela text with C's conditional, `model.expression`). `fl_expand`
runs every rule over a level in rule order, then row order (the search's order,
`model.check.bfs`), so the first copy of a new key it stores is its first parent, and the first
violation of a property it meets is the first one in that order.

Keys are one or two unsigned 64-bit words (`model.check.keys.WordCodec`), whose wrap-around is
defined in C (a column's weighted change may leave the range of a word before the sum comes
back into it). A table holds 64 bits of a bijective hash of each key, the rest of the hash
being the table's place in the directory; a slot of zeros is free, so fresh memory needs
no filling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from model.check.keys import WordCodec
from model.expression import Expr
from model.layout import Vars
from model.system import System

DIRECTORY_BITS: Final = 12
"""The seen set is split into up to 2^DIRECTORY_BITS tables by the first bits of a key's
hash, so a table grows or splits alone (never holding two copies of much of the set), each
on huge pages, and two lanes fill disjoint tables."""
SPLIT_BYTES: Final = 8 << 20
"""A full table of this many bytes splits in two instead of growing."""
FIRST_SLOTS: Final = 64
"""Slots of each table when the search starts."""
MAX_LOAD_PERCENT: Final = 85
"""A table grows once it is this full..."""
GROWTH_PERCENT: Final = 120
"""...to this size, so it stays 71% to 85% full."""
LANES: Final = 2
"""Threads that can fill the seen set at once, each the tables of its half of the hashes."""

RUNTIME: Final = r"""
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef uint64_t u64;

#define HUGE_PAGE ((u64)2 << 20)
#define RING 16
#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)
#define OUT_OF_MEMORY (-2)

/* A state's key: its words, the most significant first. */
typedef struct { u64 w[WORDS]; } Key;

/* One table of the seen set: 64 bits of its keys' hashes (a free slot holds 0; the one key
   whose stored bits are 0 is noted apart). The hash is a bijection of the key, and any
   bits not stored are the table's number, so holding them is holding the key. A table
   holds the keys whose route (see route_of) starts with its `depth` bits `prefix`. */
typedef struct {
    u64 *slots;
    u64 size, count, limit, bytes, prefix;
    unsigned depth;
    int holds_zero;
} Table;

/* New states found by one lane, in the order found: key, row of the parent, rule. */
typedef struct { Key *keys; int32_t *rows; RULE *rules; int64_t count, room; } Found;

/* A successor waiting for its probe while the slot it needs is fetched. */
typedef struct { Key key; u64 stored, route; int32_t row; RULE rule; } Pending;
typedef struct { Pending items[RING]; unsigned head, count; } Ring;

/* Where a lane is in a level: the next rule (its place in RULES) and row, the successors
   waiting for their probes, and the transitions so far. */
typedef struct { int64_t plan, row, moves; Ring ring; } Cursor;

/* The seen set: a directory of tables by the first DIRECTORY_BITS bits of a key's route (a
   table less deep has several entries). A full table grows, or, once it has SPLIT_BYTES,
   splits in two by the next bit of the route, so tables stay a few MiB (each on huge
   pages, and never two copies of much at once) however large the set. */
typedef struct {
    Table *directory[1u << DIRECTORY_BITS];
    Table *tables[1u << DIRECTORY_BITS];
    unsigned count;
    Found found[LANES];
    Cursor cursors[LANES];
} Search;

/* What one rule's loop over some rows reads, and notes as it goes. */
typedef struct {
    Search *s;
    Found *found;
    Ring *ring;
    const Key *level;
    unsigned lane, lanes;
    uint8_t *look, *watch, *triggered;
    int64_t *first_rule, *first_row, moves;
} Pass;

typedef int (*RuleLoop)(Pass *pass, int64_t from, int64_t to);

#if WORDS == 1
/* The key plus one (never 0: no key is 2^64 - 1), scattered by a bijection of 64-bit
   words that maps only 0 to 0: all 64 bits are stored, and they are the route. */
static inline u64 hash_key(Key key, u64 *route)
{
    u64 x = key.w[0] + 1;
    x ^= x >> 31; x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    *route = x;
    return x;
}

static inline u64 route_of(u64 stored, const Table *t)
{
    (void)t;
    return stored;
}
#else
/* The key's number (high word x SPAN + low word, below 2^HASH_BITS) plus one, scattered
   by a bijection of HASH_BITS-bit numbers that maps only 0 to 0: the low 64 bits are
   stored, and the route is the top 64. Every table is FIRST_DEPTH bits deep or more, so
   its prefix tells the bits not stored. */
#define HASH_BITS (64 + FIRST_DEPTH)
typedef unsigned __int128 u128;
#define HASH_MASK ((((u128)1) << HASH_BITS) - 1)
static inline u64 hash_key(Key key, u64 *route)
{
    u128 x = (u128)key.w[0] * SPAN + key.w[1] + 1;
    x = (x * ((((u128)0x9e3779b9u) << 64) | 0x7f4a7c15f39cc061ULL)) & HASH_MASK;
    x ^= x >> 37;
    x = (x * ((((u128)0xc2b2ae3du) << 64) | 0x27d4eb4f165667c5ULL)) & HASH_MASK;
    x ^= x >> 29;
    x = (x * ((((u128)0x165667b1u) << 64) | 0x9e3779f94f4a7c15ULL)) & HASH_MASK;
    x ^= x >> 32;
    *route = (u64)(x >> FIRST_DEPTH);
    return (u64)x;
}

static inline u64 route_of(u64 stored, const Table *t)
{
    u64 top = t->prefix >> (t->depth - FIRST_DEPTH);
    return (top << (64 - FIRST_DEPTH)) | (stored >> FIRST_DEPTH);
}
#endif

/* A stored hash's first slot in a table of `size` slots: its low 32 bits, scaled (the
   route, which picks the table, starts with its other bits). */
static inline u64 home(u64 stored, u64 size) { return ((stored & 0xffffffffu) * size) >> 32; }

static inline Table *table_of(const Search *s, u64 route)
{
    return s->directory[route >> (64 - DIRECTORY_BITS)];
}

static inline unsigned lane_of(u64 route, unsigned lanes)
{
    return lanes > 1 ? (unsigned)(route >> 63) : 0;
}

/* Zeroed slots: from the heap when small, else pages mapped for them alone (so a freed
   table goes back to the system), starting on a huge page so that the kernel can back
   them with huge pages (a probe then rarely misses the address cache). */
static u64 *slots_alloc(u64 *size, u64 *bytes)
{
    u64 want = *size * sizeof(u64);
    if (want < HUGE_PAGE) {
        *bytes = want;
        return calloc(*size, sizeof(u64));
    }
    u64 rounded = (want + 4095) & ~(u64)4095;
    size_t span = rounded + HUGE_PAGE;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *start = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (start > raw) munmap(raw, (size_t)(start - raw));
    char *end = start + rounded;
    if (raw + span > end) munmap(end, (size_t)(raw + span - end));
    madvise(start, rounded, MADV_HUGEPAGE);
    *size = rounded / sizeof(u64);
    *bytes = rounded;
    return (u64 *)start;
}

static void slots_free(u64 *slots, u64 bytes)
{
    if (bytes < HUGE_PAGE) free(slots);
    else munmap(slots, bytes);
}

static Table *table_new(u64 size, u64 prefix, unsigned depth)
{
    Table *t = malloc(sizeof(Table));
    if (!t) return NULL;
    t->size = size;
    t->slots = slots_alloc(&t->size, &t->bytes);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    t->count = 0;
    t->limit = t->size * MAX_LOAD_PERCENT / 100;
    t->prefix = prefix;
    t->depth = depth;
    t->holds_zero = 0;
    return t;
}

static void table_free(Table *t)
{
    slots_free(t->slots, t->bytes);
    free(t);
}

static inline void place(Table *t, u64 stored)
{
    u64 i = home(stored, t->size);
    while (t->slots[i]) if (++i == t->size) i = 0;
    t->slots[i] = stored;
}

/* Point the table's directory entries at it, and list it where `old` was listed. */
static void enter(Search *s, Table *t, Table *old)
{
    u64 first = t->prefix << (DIRECTORY_BITS - t->depth);
    u64 last = (t->prefix + 1) << (DIRECTORY_BITS - t->depth);
    for (u64 d = first; d < last; d++) s->directory[d] = t;
    for (unsigned i = 0; old && i < s->count; i++)
        if (s->tables[i] == old) {
            s->tables[i] = t;
            return;
        }
    s->tables[s->count++] = t;
}

/* Move a table's keys into one GROWTH_PERCENT of its size. */
static int grow(Search *s, Table *t)
{
    Table *bigger = table_new(t->size * GROWTH_PERCENT / 100 + 1, t->prefix, t->depth);
    if (!bigger) return OUT_OF_MEMORY;
    for (u64 j = 0; j < t->size; j++)
        if (t->slots[j]) place(bigger, t->slots[j]);
    bigger->count = t->count;
    bigger->holds_zero = t->holds_zero;
    enter(s, bigger, t);
    table_free(t);
    return 0;
}

/* Which half of a table a stored hash goes to when it splits: the next bit of its route. */
static inline int upper_half(u64 stored, const Table *t)
{
    return (int)((route_of(stored, t) >> (63 - t->depth)) & 1);
}

/* Move a table's keys into two by the next bit of their route, each as full as a table
   just grown. */
static int split(Search *s, Table *t)
{
    u64 upper = 0;
    for (u64 j = 0; j < t->size; j++) upper += t->slots[j] && upper_half(t->slots[j], t);
    u64 lower = t->count - upper; /* with a stored 0, whose route is 0 below the prefix */
    Table *low = table_new(lower * GROWTH_PERCENT / MAX_LOAD_PERCENT + 1, t->prefix << 1,
                           t->depth + 1);
    Table *high = low ? table_new(upper * GROWTH_PERCENT / MAX_LOAD_PERCENT + 1,
                                  (t->prefix << 1) | 1, t->depth + 1)
                      : NULL;
    if (!high) {
        if (low) table_free(low);
        return OUT_OF_MEMORY;
    }
    for (u64 j = 0; j < t->size; j++)
        if (t->slots[j]) place(upper_half(t->slots[j], t) ? high : low, t->slots[j]);
    low->count = lower;
    low->holds_zero = t->holds_zero;
    high->count = upper;
    enter(s, low, t);
    enter(s, high, NULL);
    table_free(t);
    return 0;
}

/* Make room in a full table: a large one splits, a small one grows. */
static int widen_table(Search *s, Table *t)
{
    if (t->bytes >= SPLIT_BYTES && t->depth < DIRECTORY_BITS) return split(s, t);
    return grow(s, t);
}

/* 1 if the key of this stored hash is new (and now held), 0 if it was held, or
   OUT_OF_MEMORY. */
static inline int put(Search *s, u64 route, u64 stored)
{
    Table *t = table_of(s, route);
    if (!stored) {
        if (t->holds_zero) return 0;
        t->holds_zero = 1;
        t->count++;
        return 1;
    }
    if (t->count >= t->limit) {
        if (widen_table(s, t)) return OUT_OF_MEMORY;
        t = table_of(s, route);
    }
    u64 size = t->size, *slots = t->slots;
    for (u64 i = home(stored, size);;) {
        u64 found = slots[i];
        if (found == stored) return 0;
        if (!found) {
            slots[i] = stored;
            t->count++;
            return 1;
        }
        if (++i == size) i = 0;
    }
}

/* Make room for `room` new states in a lane's buffers. */
static int widen(Found *f, int64_t room)
{
    Key *keys = realloc(f->keys, (size_t)room * sizeof(Key));
    if (keys) f->keys = keys;
    int32_t *rows = realloc(f->rows, (size_t)room * sizeof(int32_t));
    if (rows) f->rows = rows;
    RULE *rules = realloc(f->rules, (size_t)room * sizeof(RULE));
    if (rules) f->rules = rules;
    if (!keys || !rows || !rules) return OUT_OF_MEMORY;
    f->room = room;
    return 0;
}

static int keep(Found *f, Key key, int32_t row, RULE rule)
{
    if (f->count == f->room && widen(f, f->room ? f->room + f->room / 2 : 1 << 16))
        return OUT_OF_MEMORY;
    f->keys[f->count] = key;
    f->rows[f->count] = row;
    f->rules[f->count] = rule;
    f->count++;
    return 0;
}

static void found_free(Found *f)
{
    free(f->keys);
    free(f->rows);
    free(f->rules);
    memset(f, 0, sizeof *f);
}

/* Probe for the oldest waiting successor; keep it if it is new. */
static inline int settle(Search *s, Found *f, Ring *r)
{
    Pending *p = &r->items[r->head];
    r->head = (r->head + 1) & (RING - 1);
    r->count--;
    int added = put(s, p->route, p->stored);
    if (added < 0) return added;
    return added ? keep(f, p->key, p->row, p->rule) : 0;
}

/* A successor of the lane: its slot is fetched now and probed RING successors later, in
   the order pushed, so the first copy of a key is still the one stored. */
static inline int push(Search *s, Found *f, Ring *r, Key key, int32_t row, RULE rule,
                       unsigned lane, unsigned lanes)
{
    u64 route, stored = hash_key(key, &route);
    if (lane_of(route, lanes) != lane) return 0;
    Table *t = table_of(s, route);
    __builtin_prefetch(&t->slots[home(stored, t->size)], 1);
    if (r->count == RING) {
        int failed = settle(s, f, r);
        if (failed) return failed;
    }
    Pending *p = &r->items[(r->head + r->count) & (RING - 1)];
    p->key = key;
    p->stored = stored;
    p->route = route;
    p->row = row;
    p->rule = rule;
    r->count++;
    return 0;
}

static int drain(Search *s, Found *f, Ring *r)
{
    while (r->count) {
        int failed = settle(s, f, r);
        if (failed) return failed;
    }
    return 0;
}

Search *fl_open(void)
{
    Search *s = calloc(1, sizeof(Search));
    if (!s) return NULL;
    for (u64 prefix = 0; prefix < (1u << FIRST_DEPTH); prefix++) {
        Table *t = table_new(FIRST_SLOTS, prefix, FIRST_DEPTH);
        if (!t) {
            for (unsigned i = 0; i < s->count; i++) table_free(s->tables[i]);
            free(s);
            return NULL;
        }
        enter(s, t, NULL);
    }
    return s;
}

void fl_close(Search *s)
{
    if (!s) return;
    for (unsigned i = 0; i < s->count; i++) table_free(s->tables[i]);
    for (unsigned l = 0; l < LANES; l++) found_free(&s->found[l]);
    free(s);
}

/* Keys held, the tables holding them, and their bytes. */
int64_t fl_held(const Search *s)
{
    u64 total = 0;
    for (unsigned i = 0; i < s->count; i++) total += s->tables[i]->count;
    return (int64_t)total;
}

int64_t fl_tables(const Search *s) { return s->count; }

int64_t fl_bytes(const Search *s)
{
    u64 total = 0;
    for (unsigned i = 0; i < s->count; i++) total += s->tables[i]->bytes;
    return (int64_t)total;
}

/* Hold keys seen before (by another engine of the same search); how many were new. */
int64_t fl_hold(Search *s, const Key *keys, int64_t n)
{
    int64_t added = 0;
    for (int64_t i = 0; i < n; i++) {
        u64 route, stored = hash_key(keys[i], &route);
        int result = put(s, route, stored);
        if (result < 0) return result;
        added += result;
    }
    return added;
}

/* New states of the last level, over every lane. */
int64_t fl_found(const Search *s)
{
    int64_t total = 0;
    for (unsigned l = 0; l < LANES; l++) total += s->found[l].count;
    return total;
}

/* Drop the new states of a level and where its lanes were (a level given up). */
void fl_forget(Search *s)
{
    for (unsigned l = 0; l < LANES; l++) {
        found_free(&s->found[l]);
        memset(&s->cursors[l], 0, sizeof s->cursors[l]);
    }
}

/* Every lane's new states in the first lane's buffers. */
static int gather(Search *s)
{
    Found *f = &s->found[0];
    for (unsigned l = 1; l < LANES; l++) {
        Found *g = &s->found[l];
        if (!g->count) continue;
        if (widen(f, f->count + g->count)) return OUT_OF_MEMORY;
        memcpy(f->keys + f->count, g->keys, (size_t)g->count * sizeof(Key));
        memcpy(f->rows + f->count, g->rows, (size_t)g->count * sizeof(int32_t));
        memcpy(f->rules + f->count, g->rules, (size_t)g->count * sizeof(RULE));
        f->count += g->count;
        found_free(g);
    }
    return 0;
}

/* The last level's new states in key order (keys are distinct), with their parents' rows
   and rules, into the caller's arrays of fl_found() entries; the buffers are freed. An LSD
   radix sort, DIGIT_BITS of a word at a time from the least significant (skipping digits
   all keys share), moving each key with its row and rule between the lane's buffers and
   the caller's arrays. */
int fl_take(Search *s, Key *keys_out, int32_t *rows_out, RULE *rules_out)
{
    Found *f = &s->found[0];
    int64_t n = fl_found(s);
    if (!n) return 0;
    if (gather(s)) return OUT_OF_MEMORY;
    Key *keys = f->keys, *keys_to = keys_out;
    int32_t *rows = f->rows, *rows_to = rows_out;
    RULE *rules = f->rules, *rules_to = rules_out;
    int64_t *count = malloc(DIGITS * sizeof(int64_t));
    if (!count) return OUT_OF_MEMORY;
    for (int w = WORDS - 1; w >= 0; w--) {
        u64 every = 0;
        for (int64_t i = 0; i < n; i++) every |= keys[i].w[w];
        for (unsigned shift = 0; shift < 64 && (every >> shift); shift += DIGIT_BITS) {
            memset(count, 0, DIGITS * sizeof(int64_t));
            for (int64_t i = 0; i < n; i++) count[(keys[i].w[w] >> shift) & (DIGITS - 1)]++;
            int64_t start = 0;
            int shared = 0;
            for (unsigned d = 0; d < DIGITS; d++) {
                if (count[d] == n) shared = 1;
                int64_t c = count[d];
                count[d] = start;
                start += c;
            }
            if (shared) continue;
            for (int64_t i = 0; i < n; i++) {
                int64_t place = count[(keys[i].w[w] >> shift) & (DIGITS - 1)]++;
                keys_to[place] = keys[i];
                rows_to[place] = rows[i];
                rules_to[place] = rules[i];
            }
            Key *k = keys; keys = keys_to; keys_to = k;
            int32_t *r = rows; rows = rows_to; rows_to = r;
            RULE *u = rules; rules = rules_to; rules_to = u;
        }
    }
    if (keys != keys_out) {
        memcpy(keys_out, keys, (size_t)n * sizeof(Key));
        memcpy(rows_out, rows, (size_t)n * sizeof(int32_t));
        memcpy(rules_out, rules, (size_t)n * sizeof(RULE));
    }
    free(count);
    fl_forget(s);
    return 0;
}
"""


def _c(value: object) -> str:
    """C text of a rule's term (an Expr, or a constant)."""
    if isinstance(value, Expr):
        return value.text.replace(" -> ", " ? ")
    return str(int(value))  # type: ignore[call-overload]


def _names(*values: object) -> set[str]:
    """Variables read by some terms."""
    found: set[str] = set()
    for value in values:
        if isinstance(value, Expr):
            found |= value.names
    return found


def c_view(system: System) -> Vars:
    """The state as C variables `c0`, `c1`, … (0 for columns with one value)."""
    layout = system.layout
    values = [Expr.variable(f"c{i}") if size > 1 else 0 for i, size in enumerate(layout.sizes)]
    return Vars(layout, values)


def _decode_lines(words: WordCodec, names: set[str], indent: str) -> list[str]:
    """Declarations of the columns named `c<i>`, in column order, from the key `k`."""
    columns = sorted(int(name[1:]) for name in names)
    return [
        f"{indent}const int64_t c{i} = {words.decoder(i, f'k.w[{words.word_of[i]}]')};"
        for i in columns
    ]


def rule_loop(
    system: System,
    words: WordCodec,
    rule_index: int,
    violable: Sequence[str],
    triggerable: Sequence[str],
) -> str:
    """One rule's loop over some rows: guard, successor, properties, then the seen set."""
    rule = system.rules[rule_index]
    view = c_view(system)
    layout = system.layout
    by_name = {p.name: p for p in system.properties}
    order = [p.name for p in system.properties]
    count = len(order)
    guard = rule.guard(view)
    changes = {c: v for c, v in rule.effect(view).items() if layout.sizes[layout.index[c]] > 1}
    broken = {p: by_name[p].violated(view, rule) for p in violable}
    touched = {p: by_name[p].triggered(view, rule) for p in triggerable}
    early = _names(guard)
    later = _names(*changes.values(), *broken.values(), *touched.values())
    later |= {f"c{layout.index[c]}" for c in changes}
    terms: list[list[str]] = [[] for _ in range(words.words)]
    for column, value in changes.items():
        i = layout.index[column]
        terms[words.word_of[i]].append(f"(u64)(({_c(value)}) - c{i}) * {words.strides[i]}u")
    successor = [
        f"        next.w[{w}] = k.w[{w}] + {' + '.join(found)};"
        for w, found in enumerate(terms)
        if found
    ]
    lines = [
        f"/* {rule.action.label()} */",
        f"static int rule_{rule_index}(Pass *pass, int64_t from, int64_t to)",
        "{",
        "    Search *s = pass->s;",
        "    Found *f = pass->found;",
        "    const Key *level = pass->level;",
        f"    uint8_t look[{count}], watch[{count}];",
        f"    memcpy(look, pass->look, {count});",
        f"    memcpy(watch, pass->watch, {count});",
        "    int64_t moves = 0;",
        "    int failed = 0;",
        "    for (int64_t i = from; i < to; i++) {",
        "        const Key k = level[i];",
        *_decode_lines(words, early, "        "),
        f"        if (!({_c(guard)})) continue;",
        *_decode_lines(words, later - early, "        "),
        "        Key next = k;",
        *successor,
        "        moves++;",
    ]
    for prop, condition in broken.items():
        p = order.index(prop)
        lines += [
            f"        if (look[{p}] && ({_c(condition)})) {{",
            f"            look[{p}] = 0;",
            f"            pass->first_rule[{p}] = {rule_index};",
            f"            pass->first_row[{p}] = i;",
            "        }",
        ]
    for prop, condition in touched.items():
        p = order.index(prop)
        lines += [
            f"        if (watch[{p}] && ({_c(condition)})) {{",
            f"            watch[{p}] = 0;",
            f"            pass->triggered[{p}] = 1;",
            "        }",
        ]
    lines += [
        f"        failed = push(s, f, pass->ring, next, (int32_t)i, {rule_index},",
        "                      pass->lane, pass->lanes);",
        "        if (failed) break;",
        "    }",
        f"    memcpy(pass->look, look, {count});",
        f"    memcpy(pass->watch, watch, {count});",
        "    pass->moves += moves;",
        "    return failed;",
        "}",
    ]
    return "\n".join(lines)


EXPAND: Final = r"""
/* Every rule over the level's words, in rule order then row order, from where the lane
   stopped, for at most `rows` rows: the new states go to the lane's buffer (those of the
   lane's tables only); the first violation of each property still looked for (`look`)
   and the properties exercised (of those in `watch`) are noted, and both lists updated.
   1 once the level is done (its transitions in `transitions`), 0 when stopped before the
   end (call again to go on), or OUT_OF_MEMORY. */
int fl_expand(Search *s, unsigned lane, unsigned lanes, const Key *level, int64_t n,
              uint8_t *look, uint8_t *watch, int64_t *first_rule, int64_t *first_row,
              uint8_t *triggered, int64_t *transitions, int64_t rows)
{
    Cursor *c = &s->cursors[lane];
    Pass pass = {s, &s->found[lane], &c->ring, level, lane, lanes, look, watch, triggered,
                 first_rule, first_row, 0};
    const int64_t plans = PLAN_COUNT;
    while (c->plan < plans && rows > 0) {
        int64_t to = n - c->row > rows ? c->row + rows : n;
        int failed = RULES[c->plan](&pass, c->row, to);
        if (failed) return failed;
        rows -= to - c->row;
        c->row = to;
        if (to == n) {
            c->plan++;
            c->row = 0;
        }
    }
    c->moves += pass.moves;
    if (c->plan < plans) return 0;
    int failed = drain(s, pass.found, &c->ring);
    if (failed) return failed;
    *transitions = c->moves;
    memset(c, 0, sizeof *c);
    return 1;
}
"""


Plan = tuple[int, Sequence[str], Sequence[str]]
"""A rule index with the properties it can violate and those it can exercise."""


def rule_type(system: System) -> str:
    """The C type of a rule id: one byte when there are at most 256 rules."""
    return "uint8_t" if len(system.rules) <= 256 else "uint16_t"


def first_depth(words: WordCodec) -> int:
    """How deep the seen set's tables start: one bit (a table per lane) for keys of one
    word, whose hash is stored whole; for two words, the bits of a key's number beyond
    the 64 a table stores (the table's place tells them)."""
    if words.words == 1:
        return 1
    return max(1, (words.layout.capacity).bit_length() - 64)


def search_source(system: System, words: WordCodec, plans: Sequence[Plan]) -> str:
    """The whole C text: settings, the runtime, a loop per planned rule, and `fl_expand`."""
    first = first_depth(words)
    header = [
        f"/* Fencing Lab level engine: {system.design.label()}, {system.bounds.short()}. */",
        f"#define FIRST_DEPTH {first}",
        f"#define DIRECTORY_BITS {max(DIRECTORY_BITS, first)}",
        f"#define SPLIT_BYTES ((u64){SPLIT_BYTES}u)",
        f"#define FIRST_SLOTS {FIRST_SLOTS}",
        f"#define MAX_LOAD_PERCENT {MAX_LOAD_PERCENT}",
        f"#define GROWTH_PERCENT {GROWTH_PERCENT}",
        f"#define LANES {LANES}",
        f"#define WORDS {words.words}",
        f"#define SPAN ((u64){words.span}u)",
        "#include <stdint.h>",
        f"typedef {rule_type(system)} RULE;",
    ]
    loops = [
        rule_loop(system, words, index, violable, triggerable)
        for index, violable, triggerable in plans
    ]
    table = ", ".join(f"rule_{index}" for index, _, _ in plans) or "0"
    return "\n".join(
        [
            *header,
            RUNTIME,
            *loops,
            f"#define PLAN_COUNT {len(plans)}",
            f"static const RuleLoop RULES[] = {{{table}}};",
            EXPAND,
        ]
    )
