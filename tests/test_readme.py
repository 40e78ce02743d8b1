"""The README's tour runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.render
def test_readme_tour_runs(tmp_path, monkeypatch):
    pytest.importorskip("xslit.render")
    text = README.read_text()
    tour = text[text.index("## A short tour"):]
    code = re.search(r"```python\n(.*?)```", tour, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (tour)", "exec"), {"__name__": "readme_tour"})
    for name in ("view1.png", "matches.png", "cloud.png"):
        assert (tmp_path / name).stat().st_size > 0
