"""examples/tour.ipynb runs headless from top to bottom, as `make test` runs it: any failing cell fails."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[3]
NOTEBOOK = REPO / "examples" / "tour.ipynb"


def test_the_tour_notebook_runs_every_cell() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(html) >= 3, "pages show as HTML tables"
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pictures) >= 3, "a conversation, article rows and the plot of row heights show as pictures"
    assert any('class="dataframe' in h for h in html), "a pandas DataFrame shows as a table"
    texts = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert any("Snippet(text=" in t and "'message'" in t and "'article'" in t for t in texts), "store.search shows snippets of both kinds"
