from exp import *
from pron import FIRST, SECOND
def addressee(f, only_subject=False):
    def rr(q, hits, conv):
        out = []
        L = LINES[conv]
        for h in hits:
            t = L[h[0]][h[1]-1].split(':', 1)[-1]
            hit = SECOND.search(t) and not FIRST.search(t)
            if only_subject and h[6].get('subject', 1) <= 1: hit = False
            out.append((h[3] * (f if hit else 1.0), h))
        return [h for _, h in sorted(out, key=lambda x: -x[0])]
    return rr
for f in (0.9, 0.8, 0.7, 0.5):
    evaluate(addressee(f), f'2nd-person-only x{f}')
    evaluate(addressee(f, True), f'2nd-person-only subj x{f}')
