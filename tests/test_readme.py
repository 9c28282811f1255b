"""The README's code example runs as written (so the front page stays true)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
    assert "SearchResult(action=" in capsys.readouterr().out


def test_readme_opens_with_the_two_setup_commands():
    text = README.read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make demo", "make test"]
