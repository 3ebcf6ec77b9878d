"""A short NotesKit session: write, draft, page, edit with a conflict, and the change feed.

Runs on the default store (under $XDG_DATA_HOME/noteskit) unless --db names another file (or a
PostgreSQL connection URI); with --postgres, on a throwaway PostgreSQL server started for the run
(Debian's postgresql package; see examples/throwaway_postgres.py) and deleted after it.
"""
from __future__ import annotations

import argparse
import contextlib
from typing import Iterator

import noteskit as nk


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """The URI of a store on a PostgreSQL server that lasts as long as the block."""
    from throwaway_postgres import ThrowawayCluster

    with ThrowawayCluster() as cluster:
        print(f"server:   throwaway PostgreSQL on 127.0.0.1:{cluster.port} (deleted at the end)")
        yield cluster.uri()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=str(nk.default_store_path()),
                        help="store file or postgresql:// URI (default: %(default)s)")
    parser.add_argument("--postgres", action="store_true", help="run on a throwaway PostgreSQL server")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        where = stack.enter_context(throwaway_postgres()) if args.postgres else args.db
        run(where)


def run(where: str) -> None:
    with nk.Store.open(where) as store:
        shown = store.uri or where
        print(f"store: {shown} (library {nk.library_version()}, {store.articles.count()} articles)")
        seen: list[nk.Change] = []
        with store.subscribe(seen.extend):
            a = store.articles.create(title="周末", content="今天天气真好，去公园散步。")
            print(f"created   #{a.id} {a.title!r} rev {a.revision} at {a.created_at:%Y-%m-%d %H:%M:%S}")

            d = store.articles.new_draft()
            d.content = "A draft is written through as you type: a crash loses nothing."
            print(f"draft     {d.id} titled {d.title!r} (today's date), {len(store.articles.drafts())} unsaved")
            b = d.save()
            print(f"saved     #{b.id} {b.title!r}")

            stale = store.articles.edit(a.id)
            store.articles.update(a.id, content="今天下雨了。")
            stale.content = "an edit made on the old revision"
            try:
                stale.save()
            except nk.ConflictError as e:
                print(f"conflict  {e}")
                stale.discard()

            try:
                store.articles.create(title="   ", content="x")
            except nk.ValidationError as e:
                print(f"refused   {e} (field {e.field!r})")

        print(f"feed      {len(seen)} changes: " + ", ".join(f"{c.op} #{c.id}" for c in seen))
        page = store.articles.list(limit=3)
        print("newest    " + " | ".join(f"#{x.id} {x.title}" for x in page) + (" | ..." if page.has_more else ""))


if __name__ == "__main__":
    main()
