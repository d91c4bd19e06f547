"""Generate an N-page MkDocs project shaped like the handbook (same theme, features and
extensions; sections of pages with headings, tables, cross-page links and anchors)."""

from __future__ import annotations

import argparse
import random
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(dest: Path, pages: int, per_section: int = 50, features: list[str] | None = None) -> Path:
    docs = dest / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    names = [f"s{i // per_section:02d}/page-{i:04d}.md" for i in range(pages)]
    for i, name in enumerate(names):
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        links = []
        for _ in range(8):
            j = rng.randrange(pages)
            rel = (
                Path(names[j]).relative_to(Path(name).parent)
                if Path(names[j]).parent == Path(name).parent
                else Path("..") / names[j]
            )
            links.append(f"[page {j}]({rel.as_posix()}#step-{rng.randrange(3) + 1})")
        rows = "\n".join(
            f"| `torch.cuda.x{k}` | `torch.accelerator.x{k}` | renamed | [src](#step-1) |" for k in range(10)
        )
        body = [f"---\ndescription: Generated bench page {i}.\nreviewed: 2026-11-29\n---\n\n# Page {i}\n"]
        for step in range(1, 4):
            see = " and ".join(links[step * 2 : step * 2 + 3])
            body.append(f"## Step {step}\n\nMove the code from `cuda` to `tpu`. See {see}.\n")
            body.append("```python\nimport torch\ndevice = torch.device('tpu')\n```\n")
        body.append("| GPU | TPU | Change | Source |\n| --- | --- | --- | --- |\n" + rows + "\n")
        path.write_text("\n".join(body), encoding="utf-8")
    home = "---\ndescription: The generated bench site's home.\nreviewed: 2026-11-29\n---\n\n# Home\n\n"
    (docs / "index.md").write_text(home + "[first](s00/page-0000.md)\n")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = re.sub(r"^hooks:\n(  - .*\n)+", "", config, flags=re.M)
    config = re.sub(r"^extra_(css|javascript):\n(  - .*\n)+", "", config, flags=re.M)
    # No repository to edit in, and none of the handbook's pages to redirect to.
    config = re.sub(r"^(repo_url|edit_uri): .*\n", "", config, flags=re.M)
    config = re.sub(r"^  - redirects:\n(      .*\n)+", "", config, flags=re.M)
    config = config[: config.index("\nnav:")] + "\nnav:\n  - Home: index.md\n"
    sections: dict[str, list[str]] = {}
    for name in names:
        sections.setdefault(name.split("/")[0], []).append(name)
    for sec, items in sections.items():
        config += f"  - Section {sec}:\n" + "".join(f"      - {n}\n" for n in items)
    if features is not None:
        config = re.sub(
            r"(  features:\n)(    - .*\n)+", lambda m: m.group(1) + "".join(f"    - {f}\n" for f in features), config
        )
    (dest / "mkdocs.yml").write_text(config, encoding="utf-8")
    shutil.copytree(ROOT / "overrides", dest / "overrides", dirs_exist_ok=True)  # theme.custom_dir
    # the scripts the theme's templates load (the search worker's wrapper, a moved anchor's redirect)
    shutil.copytree(ROOT / "docs" / "assets" / "javascripts", docs / "assets" / "javascripts", dirs_exist_ok=True)
    return dest


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--pages", type=int, default=1000)
    args = parser.parse_args()
    generate(args.dest, args.pages)
