"""Input data: the bundled Cranfield collection (:mod:`.bundled`) and TREC run and qrels files (:mod:`.runs`)."""
