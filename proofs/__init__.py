"""The prover: z3 on the same rules the explorer runs, for the bounds and for every horizon.

`encoding` turns the rules and properties into z3 terms (the same functions the explorer
evaluates on numbers); `bmc` checks runs up to a depth and agrees with the explorer;
`induction` and `invariants` prove properties for every horizon; `receiver` proves the
receiver's own guarantee; `report` puts the answers in the one verdict vocabulary.

May import the model (the specification and the checker).
"""
