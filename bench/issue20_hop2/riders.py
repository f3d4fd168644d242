import sys, collections
from pathlib import Path
sys.path.insert(0, '/work/shared/eval/locomo')
import score
from vault_memory import Vault
ROOT = Path('/tmp/locomo-dev'); B = 2000
T = collections.Counter()
for c in range(5):
    d = ROOT / f'conv-{c}'
    v = Vault(d / 'vault'); v.index()
    for q in score.load_questions(d / 'questions.jsonl'):
        cat = q['category']
        ev = {(e['path'], int(e['line'])) for e in q['evidence']}
        hits = v.search(q['question'], limit=60, fresh=False)
        used = 0; taken=set(); nt=0
        for h in hits:
            L = (d / 'vault' / h.path).read_text().split('\n')
            new = [ln for ln in range(h.start_line, h.end_line+1) if (h.path, ln) not in taken]
            cost = sum(len(L[ln-1])+1 for ln in new)
            if used + cost > B and nt: break
            used += cost; nt += 1; taken.update((h.path, ln) for ln in new)
            own = 0.4*h.scores['keyword'] + 0.6*h.scores['vector']
            isev = any((h.path, ln) in ev for ln in new)
            b = 'own<0.3' if own < 0.3 else 'own<0.45' if own < 0.45 else 'own>=0.45'
            T[(cat, b, isev, 'n')] += 1; T[(cat, b, isev, 'ch')] += cost
for cat in (1,2,3,4):
    tot = sum(v for k, v in T.items() if k[0]==cat and k[3]=='ch')
    print(cat, {f'{b} ev={e}': (T[(cat,b,e,'n')], round(T[(cat,b,e,'ch')]/tot,3)) for b in ('own<0.3','own<0.45','own>=0.45') for e in (True,False)})
