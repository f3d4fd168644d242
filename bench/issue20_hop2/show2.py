import sys
from pathlib import Path
sys.path.insert(0, '/work/shared/eval/locomo')
import score
from vault_memory import Vault
ROOT = Path('/tmp/locomo-dev'); B = 2000
c = int(sys.argv[1]); qi = [int(x) for x in sys.argv[2].split(',')]
d = ROOT / f'conv-{c}'
v = Vault(d / 'vault'); v.index()
qs = [q for q in score.load_questions(d / 'questions.jsonl') if q['category'] == 1]
K = ('keyword', 'vector', 'context', 'subject', 'question')
for i in qi:
    q = qs[i]
    ev = {(e['path'], int(e['line'])) for e in q['evidence']}
    print('\n###', q['question'], '|', q['answer'])
    hits = v.search(q['question'], limit=400, fresh=False)
    used = 0
    for r, h in enumerate(hits):
        L = (d / 'vault' / h.path).read_text().split('\n')
        cost = sum(len(L[ln-1])+1 for ln in range(h.start_line, h.end_line+1))
        used += cost
        mark = 'EV' if any((h.path, ln) in ev for ln in range(h.start_line, h.end_line+1)) else '  '
        if used > B and mark != 'EV': continue
        sc = ' '.join(f'{h.scores[k]:.2f}' for k in K)
        print(f'{r:3d} {mark} {used:5d} {h.path[7:17]}:{h.start_line}-{h.end_line} {h.score:.2f} [{sc}] {h.text[:100]!r}')
