# cdag tests — tests/record/phase_blocks.py: the rank blocks of a phase file, for the check
# scripts beside it (check_*.py import it).
import re


def rank_blocks(path):
    """rank -> the lines of its `rank R { ... }` block, stripped, in order."""
    blocks, rank = {}, None
    for line in open(path):
        line = line.strip()
        m = re.match(r"rank (\d+) \{", line)
        if m:
            rank = int(m.group(1))
            blocks[rank] = []
        elif line == "}":
            rank = None
        elif rank is not None:
            blocks[rank].append(line)
    return blocks
