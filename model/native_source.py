"""The C text of the native level engine: a fixed runtime, then the design's rules as loops.

The runtime holds what every design shares: the seen set (hash tables of key words split
into `PARTS` tables by hash, linear probing, probes prefetched a few keys ahead), the
buffers of a level's new states and a radix sort that puts them in key order. The rules
come after it, written from the same symbolic evaluation as the numba loops
(`model.kernels`): each guard, effect and property condition is the rules' own term,
printed as C (the Promela text with C's conditional, `model.expression`). One function,
`fl_expand`, runs every rule over a whole level in rule order, then row order (the search's
order, `model.bfs`), so the first copy of a new key it stores is its first parent, and the
first violation of a property it meets is the first one in that order.

Keys are one or two unsigned 64-bit words (`model.keys.WordCodec`), whose wrap-around is
defined in C (a column's weighted change may leave the range of a word before the sum comes
back into it). A table holds the keys' hashes, which are
never 0, so a slot of zeros is free and fresh memory needs no filling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from model.expression import Expr
from model.keys import WordCodec
from model.layout import Vars
from model.system import System

PART_BITS: Final = 8
"""The seen set is split into 2^PART_BITS tables by the top bits of a key's hash, so a table
grows alone (never holding two copies of the whole set) and lanes fill disjoint tables."""
MAX_LOAD_PERCENT: Final = 85
"""A table grows once it is this full..."""
GROWTH_PERCENT: Final = 120
"""...to this size, so it stays 71% to 85% full."""
LANES: Final = 2
"""Threads that can fill the seen set at once, each its own range of tables."""

RUNTIME: Final = r"""
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef uint64_t u64;

#define PARTS (1u << PART_BITS)
#define FIRST_SLOTS 64
#define HUGE_PAGE ((u64)2 << 20)
#define RING 16
#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)
#define OUT_OF_MEMORY (-2)

/* A state's key: its words, the most significant first. */
typedef struct { u64 w[WORDS]; } Key;

/* One table of the seen set: 64 bits of its keys' hashes (a free slot holds 0; the one key
   whose stored bits are 0 is noted apart). The hash is a bijection of the key, and the
   bits not stored are the table's number, so holding them is holding the key. */
typedef struct { u64 *slots; u64 size, count, limit, bytes; int holds_zero; } Table;

/* New states found by one lane, in the order found: key, row of the parent, rule. */
typedef struct { Key *keys; int32_t *rows; RULE *rules; int64_t count, room; } Found;

/* A successor waiting for its probe while the slot it needs is fetched. */
typedef struct { Key key; u64 stored; unsigned part; int32_t row; RULE rule; } Pending;
typedef struct { Pending items[RING]; unsigned head, count; } Ring;

/* Where a lane is in a level: the next rule (its place in RULES) and row, the successors
   waiting for their probes, and the transitions so far. */
typedef struct { int64_t plan, row, moves; Ring ring; } Cursor;

typedef struct { Table tables[PARTS]; Found found[LANES]; Cursor cursors[LANES]; } Search;

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
   words that maps only 0 to 0: the top PART_BITS pick the table, all 64 are stored. */
#define HOME_SKIP PART_BITS
static inline u64 hash_key(Key key, unsigned *part)
{
    u64 x = key.w[0] + 1;
    x ^= x >> 31; x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL;
    x ^= x >> 33;
    *part = (unsigned)(x >> (64 - PART_BITS));
    return x;
}
#else
/* The key's number (high word x SPAN + low word, below 2^72) plus one, scattered by a
   bijection of 72-bit numbers that maps only 0 to 0: the top 8 bits pick the table, the
   low 64 are stored. */
#define HOME_SKIP 0
typedef unsigned __int128 u128;
#define LOW72 ((((u128)1) << 72) - 1)
static inline u64 hash_key(Key key, unsigned *part)
{
    u128 x = (u128)key.w[0] * SPAN + key.w[1] + 1;
    x = (x * ((((u128)0x9eu) << 64) | 0x3779b97f4a7c15f1ULL)) & LOW72;
    x ^= x >> 37;
    x = (x * ((((u128)0xc2u) << 64) | 0xb2ae3d27d4eb4f15ULL)) & LOW72;
    x ^= x >> 29;
    x = (x * ((((u128)0x16u) << 64) | 0x5667b19e3779f9b1ULL)) & LOW72;
    x ^= x >> 32;
    *part = (unsigned)(x >> 64);
    return (u64)x;
}
#endif

/* A stored hash's first slot in a table of `size` slots: 32 of its bits, scaled. */
static inline u64 home(u64 stored, u64 size)
{
    return (((stored << HOME_SKIP) >> 32) * size) >> 32;
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

static int table_init(Table *t, u64 size)
{
    t->size = size;
    t->slots = slots_alloc(&t->size, &t->bytes);
    t->count = 0;
    t->holds_zero = 0;
    t->limit = t->size * MAX_LOAD_PERCENT / 100;
    return t->slots ? 0 : OUT_OF_MEMORY;
}

/* Move a table's keys into one GROWTH_PERCENT of its size. */
static int grow(Table *t)
{
    Table bigger;
    if (table_init(&bigger, t->size * GROWTH_PERCENT / 100 + 1)) return OUT_OF_MEMORY;
    for (u64 j = 0; j < t->size; j++) {
        u64 stored = t->slots[j];
        if (!stored) continue;
        u64 i = home(stored, bigger.size);
        while (bigger.slots[i]) if (++i == bigger.size) i = 0;
        bigger.slots[i] = stored;
    }
    bigger.count = t->count;
    bigger.holds_zero = t->holds_zero;
    slots_free(t->slots, t->bytes);
    *t = bigger;
    return 0;
}

/* 1 if the key of this stored hash is new (and now held), 0 if it was held, or
   OUT_OF_MEMORY. */
static inline int put(Search *s, unsigned part, u64 stored)
{
    Table *t = &s->tables[part];
    if (!stored) {
        if (t->holds_zero) return 0;
        t->holds_zero = 1;
        t->count++;
        return 1;
    }
    if (t->count >= t->limit && grow(t)) return OUT_OF_MEMORY;
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
    int added = put(s, p->part, p->stored);
    if (added < 0) return added;
    return added ? keep(f, p->key, p->row, p->rule) : 0;
}

/* A successor of the lane: its slot is fetched now and probed RING successors later, in
   the order pushed, so the first copy of a key is still the one stored. */
static inline int push(Search *s, Found *f, Ring *r, Key key, int32_t row, RULE rule,
                       unsigned lane, unsigned lanes)
{
    unsigned part;
    u64 stored = hash_key(key, &part);
    if (lanes > 1 && part * lanes >> PART_BITS != lane) return 0;
    Table *t = &s->tables[part];
    __builtin_prefetch(&t->slots[home(stored, t->size)], 1);
    if (r->count == RING) {
        int failed = settle(s, f, r);
        if (failed) return failed;
    }
    Pending *p = &r->items[(r->head + r->count) & (RING - 1)];
    p->key = key;
    p->stored = stored;
    p->part = part;
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
    for (unsigned p = 0; p < PARTS; p++) {
        if (table_init(&s->tables[p], FIRST_SLOTS)) {
            for (unsigned q = 0; q < p; q++) slots_free(s->tables[q].slots, s->tables[q].bytes);
            free(s);
            return NULL;
        }
    }
    return s;
}

void fl_close(Search *s)
{
    if (!s) return;
    for (unsigned p = 0; p < PARTS; p++) slots_free(s->tables[p].slots, s->tables[p].bytes);
    for (unsigned l = 0; l < LANES; l++) found_free(&s->found[l]);
    free(s);
}

/* Keys held, and bytes of the tables holding them. */
int64_t fl_held(const Search *s)
{
    u64 total = 0;
    for (unsigned p = 0; p < PARTS; p++) total += s->tables[p].count;
    return (int64_t)total;
}

int64_t fl_bytes(const Search *s)
{
    u64 total = 0;
    for (unsigned p = 0; p < PARTS; p++) total += s->tables[p].bytes;
    return (int64_t)total;
}

/* Hold keys seen before (by another engine of the same search); how many were new. */
int64_t fl_hold(Search *s, const Key *keys, int64_t n)
{
    int64_t added = 0;
    for (int64_t i = 0; i < n; i++) {
        unsigned part;
        u64 stored = hash_key(keys[i], &part);
        int result = put(s, part, stored);
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


def search_source(system: System, words: WordCodec, plans: Sequence[Plan]) -> str:
    """The whole C text: settings, the runtime, a loop per planned rule, and `fl_expand`."""
    header = [
        f"/* Fencing Lab level engine: {system.design.label()}, {system.bounds.short()}. */",
        f"#define PART_BITS {PART_BITS}",
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
