"""Do the factors act additively, as a one-factor-at-a-time sweep assumes? (factorial blocks)

A profile may declare factorial blocks: two or three factors rendered as a full cross
(``interactions``: pitch × lighting, focal_length × background). Per block, the within-scene
protocol variance splits into main effects and the non-additive rest; ``max_interaction_share``
bounds that rest's share. ``max_block_sign_crossings`` bounds the generator pairs whose order
flips somewhere inside the block — a flip an OFAT sweep can miss entirely. Under a profile
without blocks both checks are skipped as not applicable.
"""


def test_interaction_share(audit_evaluator, audit_block, audit_summary, audit_check):
    audit_check.metric(audit_summary, "interaction_share", audit_block)


def test_block_sign_crossings(audit_evaluator, audit_block, audit_summary, audit_check):
    audit_check.metric(audit_summary, "block_sign_crossings", audit_block)
