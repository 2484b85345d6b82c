"""The numeric cores: pure numpy/scipy, float64, no pandas, PyTerrier, ir_measures or torch (a test checks).

- :mod:`.frechet` — Gaussian statistics and the exact Fréchet distance (cross / QR / Gram routes, no sqrtm);
- :mod:`.jackknife` — FD's per-query jackknife pseudo-values;
- :mod:`.weighted` — per-query sums and cross-products re-weighted into Gaussians (the bootstrap's fast path);
- :mod:`.extrapolation` — FD∞; :mod:`.kid` — KID; :mod:`.knn` — k-NN precision / recall;
- :mod:`.histogram` — DO and HSA from score histograms.
"""
