"""The conversation recall's embedder is tested on, in CPython (tests/) and in the page (e2e/):
a turn that answers the question in other words (no content word in common), then small
talk that pushes it far below the window by the time the question is asked."""

EVIDENCE = "Quick update. Scout weighs 10 kilos already and eats like a horse."
QUESTION = "How heavy is the puppy?"
FILLER = [
    "Morning! Work has been relentless, three deadlines at once.",
    "The neighbours had a party until late again.",
    "My inbox is a disaster zone.",
    "I bought a houseplant, let's see how long it survives.",
    "The weekend went by in a flash.",
    "It rained all day so I didn't leave the house.",
]
