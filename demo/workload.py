# workload.py: the demo workload: builds, serialises and parses JSON documents, the kind of
# churn a real service has. Deterministic (fixed seed).
import json
import random

random.seed(7)
docs = []
for i in range(200):
    doc = {
        "id": i,
        "name": "item-%d" % i * (1 + i % 5),
        "tags": [random.choice("abcdefgh") * random.randint(1, 40) for _ in range(i % 9)],
        "values": [random.random() for _ in range(i % 50)],
    }
    text = json.dumps(doc)
    docs.append(json.loads(text))
    if len(docs) > 60:
        docs = docs[30:]
blob = "".join(json.dumps(d) for d in docs)
assert len(docs) > 0 and len(blob) > 0
