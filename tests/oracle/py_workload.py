# py_workload.py: the oracle test's python3 workload (run with PYTHONMALLOC=malloc, so every
# object is a malloc-family call): JSON and dict churn in the main thread and in four threads
# that start, work and end. Deterministic (fixed seeds).
import json
import random
import threading


def churn(seed, rounds):
    rng = random.Random(seed)
    table = {}
    for i in range(rounds):
        doc = {
            "id": i,
            "name": "item-%d" % i * (1 + i % 5),
            "tags": [rng.choice("abcdefgh") * rng.randint(1, 40) for _ in range(i % 9)],
            "values": [rng.random() for _ in range(i % 50)],
        }
        table[i % 97] = json.loads(json.dumps(doc))
    return sum(len(json.dumps(v)) for v in table.values())


workers = [threading.Thread(target=churn, args=(t, 150)) for t in range(4)]
for w in workers:
    w.start()
total = churn(7, 300)
for w in workers:
    w.join()
assert total > 0
