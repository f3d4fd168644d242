import sys, pickle, json
from pathlib import Path
sys.path.insert(0, '/work/shared/eval/locomo')
import score
from vault_memory import Vault
ROOT = Path('/tmp/locomo-dev')
out = []
for c in range(5):
    d = ROOT / f'conv-{c}'
    v = Vault(d / 'vault'); v.index()
    lines = {}
    for q in score.load_questions(d / 'questions.jsonl'):
        hits = v.search(q['question'], limit=300, fresh=False)
        out.append(dict(conv=c, q=q, hits=[(h.path, h.start_line, h.end_line, h.score, h.heading, h.text, dict(h.scores)) for h in hits]))
    for p in (d / 'vault' / 'memory').glob('*.md'):
        lines[f'memory/{p.name}'] = p.read_text().split('\n')
    out.append(dict(conv=c, lines=lines))
pickle.dump(out, open('/tmp/hop2/cache.pkl', 'wb'))
