"""A stand-in for a coding agent: `jr2 work` runs it once per ready item.

It reads the item from the environment, "works" for a moment (writing its notes into the item's
scratch directory, `JR2_SANDBOX`), and prints a JSON line that becomes the item's output.
"""

import json
import os
import pathlib
import time

item = json.loads(pathlib.Path(os.environ["JR2_ITEM_JSON"]).read_text())
print(f"working on {item['id']}: {item['title']}", flush=True)
notes = pathlib.Path(os.environ["JR2_SANDBOX"]) / "NOTES.md"
notes.write_text(f"# {item['id']}\n\n{item['title']}\n")
time.sleep(0.2)
print(json.dumps({"id": item["id"], "branch": os.environ.get("JR2_ITEM_BRANCH") or None}))
