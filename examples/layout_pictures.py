"""Row heights, bubbles and pictures: measures a few articles and a short chat with Pango and draws
them, so you can see what the numbers mean.

    .venv/bin/python examples/layout_pictures.py [--out folder]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import noteskit as nk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=".", help="where to write articles.png and chat.png")
    out = Path(parser.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    with nk.Store.memory() as store:
        articles = store.articles.create_many([
            {"title": "2026-11-29", "content": "今天天气真好，我们去公园散步。The leaves are turning yellow."},
            {"title": "读书笔记", "content": "一本书读了三遍，每一遍都有新的发现。\n\n第二段：空行也算高度。"},
            {"title": "A very long title that will not fit on one line and is ellipsized", "content": "short"},
        ])
        alice = store.conversations.create("Alice")
        alice.send("下午有空吗？")
        alice.receive("有的！三点在公园门口见？Let's take a longer walk this time, the weather is perfect.")
        alice.send("好，三点见 👋")
        with store.layout(width=375) as lay:
            ids = [a.id for a in articles]
            for a, h in zip(articles, lay.article_heights(ids)):
                print(f"article {a.id} {a.title[:20]!r}: {h:g} px")
            rows = lay.rows(ids)
            print(f"total {rows.total_height:g} px; row at y=200: {rows.row_at(200)}; visible in 0..250: {list(rows.visible(0, 250))}")
            for m in alice.history():
                print(f"message {m.id} from_me={m.from_me}: {lay.bubble(m.id)}")
            print(lay.render_articles(ids, out / "articles.png"))
            print(lay.render_conversation(alice.id, out / "chat.png"))


if __name__ == "__main__":
    main()
