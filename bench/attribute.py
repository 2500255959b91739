#!/usr/bin/env python3
"""Edits a copy of the analyzer so that some analyses are not fed, for bench/attribute.sh.

Usage: bench/attribute.py TREE VARIANT   (TREE: a checkout to edit in place; never this one)

Variants (the pass still parses, classifies and infers every packet; only the named analyses
are skipped, so that the time they cost shows beside the full build):
  full         nothing skipped
  no-15        issue 15's analyses: streams, stalls, head-of-line (not fed any chunk)
  no-13        issue 13's per-packet work: lifecycle (not fed) and the capture-duplicate filter
  no-13-15     both
  no-hol, no-streams, no-stalls   one of issue 15's analyses

The edits are exact text replacements in analyzer/src/analyze/pass.rs; when that file no longer
holds the text, the script stops and names the variant to update.
"""
import sys

# DATA and SACK go to each analysis's own entry in `Pass::chunk`, other chunks to the generic
# one: a skipped analysis loses both.
STREAMS = [
    ('''                if crate::streams::Streams::wants(view.ctype) {
                    assoc.streams.chunk(ctx, sender, view, c);
                }
''', ''),
    ('''                assoc.streams.data(ctx, sender, d);
''', ''),
]
STALLS = [
    ('''                if crate::stalls::Stalls::wants(view.ctype) {
                    assoc.stalls.chunk(ctx, sender, c);
                }
''', ''),
    ('''                assoc.stalls.data_chunk(ctx, sender, d);
''', ''),
    ('''                assoc.stalls.sack_chunk(ctx, sender, k);
''', ''),
]
HOL = [
    ('''                if crate::hol::Hol::wants(view.ctype) {
                    let epoch = assoc.streams.epoch(sender);
                    assoc.hol.chunk(ctx, sender, c, epoch);
                }
''', ''),
    ('''                let epoch = assoc.streams.epoch(sender);
                assoc.hol.data(ctx, sender, d, epoch);
''', ''),
    ('''                assoc.hol.sack(ctx, sender, k);
''', ''),
]
LIFECYCLE = [
    ('''                assoc.lifecycle.chunk(ctx, sender, view, c);
''', ''),
    ('''                assoc.lifecycle.data(ctx, sender);
''', ''),
    ('''                assoc.lifecycle.sack(ctx, sender);
''', ''),
]
DUPS = [
    ('''        if let Some(first) = self
            .acct
            .dups
            .find(&key, ts_ns, |a, s| tracker.peer_sent(a, s))
        {''', '''        let _ = tracker;
        if let Some(first) = None::<FirstCopy> {'''),
    ('''                self.acct.dups.insert(key, ts_ns, first);
                if checksum_ok''', '''                let _ = (first, &key);
                if checksum_ok'''),
    ('''        self.acct.dups.insert(key, ts_ns, first);
        if ended {''', '''        let _ = (first, key);
        if ended {'''),
]
EDITS = {
    'full': [],
    'no-15': STREAMS + STALLS + HOL,
    'no-13': LIFECYCLE + DUPS,
    'no-hol': HOL,
    'no-streams': STREAMS,
    'no-stalls': STALLS,
}
EDITS['no-13-15'] = EDITS['no-13'] + EDITS['no-15']


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in EDITS:
        sys.exit(f"usage: {sys.argv[0]} TREE {{{','.join(EDITS)}}}")
    tree, variant = sys.argv[1], sys.argv[2]
    if not EDITS[variant]:
        # Untouched (an older commit may not even have this file).
        return
    path = f"{tree}/analyzer/src/analyze/pass.rs"
    src = open(path).read()
    for old, new in EDITS[variant]:
        if src.count(old) != 1:
            sys.exit(f"{path}: the text variant {variant} removes is no longer there once; "
                     f"update bench/attribute.py:\n{old}")
        src = src.replace(old, new)
    open(path, 'w').write(src)


if __name__ == '__main__':
    main()
