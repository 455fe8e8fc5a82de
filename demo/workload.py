# workload.py: the demo workload: builds, serialises and parses JSON documents, the kind of
# churn a real service has. Deterministic (fixed seed). Optional argument: how many documents
# (200 by default; the benchmarks use more to measure the cost per call apart from startup).
import json
import random
import sys

random.seed(7)
docs = []
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 200):
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
