"""Where document vectors come from: the :class:`~.embedder.Embedder` and its persistent cache, precomputed
:class:`~.sources.VectorStore` files, text sources (:class:`~.text.TextLookup`), the default encoder, and
scale-out encoding (:mod:`.distributed`), and trained models fetched from the package registry for machines without
hub access (:mod:`.models`)."""
