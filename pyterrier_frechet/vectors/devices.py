"""Checking a torch ``device=`` before any work: one clear ValueError instead of torch's AssertionError
("Torch not compiled with CUDA enabled"), NotImplementedError or RuntimeError deep inside a computation."""
from typing import Optional


def check_torch_device(device: Optional[str], option: str = 'device') -> None:
    """Raise ValueError unless ``device`` (None: the default choice) names a torch device this process can use.

    ``option`` is how the caller's user names the argument (``'device'``, ``'--device'``)."""
    if device is None:
        return
    import torch
    try:
        dev = torch.device(str(device))
    except (RuntimeError, TypeError, ValueError) as ex:
        raise ValueError(f"{option}={device!r} is not a torch device; use 'cpu', 'cuda', 'cuda:N' or 'mps'") from ex
    if dev.type == 'cpu':
        return
    if dev.type == 'meta':
        raise ValueError(f"{option}={device!r} holds no data; use 'cpu', 'cuda', 'cuda:N' or 'mps'")
    if dev.type == 'cuda':
        if not torch.cuda.is_available():
            build = 'a CPU-only build of torch' if torch.version.cuda is None else 'no CUDA GPU is visible'
            raise ValueError(f"{option}={device!r}, but this torch cannot use CUDA ({build}); use {option}='cpu' or leave "
                             'it unset (the default picks CUDA when there is one)')
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f'{option}={device!r}, but torch sees {torch.cuda.device_count()} CUDA device(s)')
        return
    if dev.type == 'mps':
        mps = getattr(torch.backends, 'mps', None)
        if mps is None or not mps.is_available():
            raise ValueError(f"{option}={device!r}, but this torch cannot use Apple's MPS here; use {option}='cpu' or "
                             'leave it unset')
        return
    try:
        torch.empty(1, device=dev)
    except (AssertionError, NotImplementedError, RuntimeError) as ex:
        raise ValueError(f'{option}={device!r} cannot be used by this torch ({type(ex).__name__}: {ex}); use '
                         f"{option}='cpu' or leave it unset") from ex
