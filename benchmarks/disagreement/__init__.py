"""When do FD variants agree with nDCG@10? (``python -m benchmarks.disagreement.study``; see README.md here.)"""
