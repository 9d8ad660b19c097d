"""Corpora and vocabularies: the Debian corpus build (archive, .deb cache, gettext catalogs, DDTP,
pair filters), user text, data cards, SentencePiece vocabularies, token batching."""
