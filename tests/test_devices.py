"""A torch device= checked before any work (vectors/devices.py): one ValueError naming the option and what to use.
The CUDA and MPS cases follow what this machine's torch can use, so each branch asserts something on every machine."""
import pytest
import torch

from pyterrier_frechet.vectors.devices import check_torch_device


def test_none_and_cpu_are_accepted():
    assert check_torch_device(None) is None and check_torch_device('cpu') is None
    assert check_torch_device(torch.device('cpu')) is None


@pytest.mark.parametrize('device', ['gpu', 'cuda:x', ''])
def test_a_name_that_is_no_torch_device_is_refused_naming_the_option(device):
    with pytest.raises(ValueError, match=rf"--device={device!r} is not a torch device; use 'cpu', 'cuda'"):
        check_torch_device(device, option='--device')


def test_meta_holds_no_data():
    with pytest.raises(ValueError, match=r"device='meta' holds no data"):
        check_torch_device('meta')


def test_cuda_is_accepted_only_where_torch_can_use_it():
    if torch.cuda.is_available():
        assert check_torch_device('cuda') is None and check_torch_device('cuda:0') is None
        n = torch.cuda.device_count()
        with pytest.raises(ValueError, match=rf'torch sees {n} CUDA device\(s\)'):
            check_torch_device(f'cuda:{n}')
    else:
        build = 'a CPU-only build of torch' if torch.version.cuda is None else 'no CUDA GPU is visible'
        with pytest.raises(ValueError, match=rf"device='cuda', but this torch cannot use CUDA \({build}\); use device='cpu'"):
            check_torch_device('cuda')


def test_mps_is_accepted_only_where_torch_can_use_it():
    mps = getattr(torch.backends, 'mps', None)
    if mps is not None and mps.is_available():
        assert check_torch_device('mps') is None
    else:
        with pytest.raises(ValueError, match=r"--device='mps', but this torch cannot use Apple's MPS here"):
            check_torch_device('mps', option='--device')


def test_a_device_type_this_torch_cannot_allocate_on_is_one_value_error():
    # torch knows the 'vulkan' device type but this build has no kernel for it: NotImplementedError inside torch
    with pytest.raises(ValueError, match=r"(?s)device='vulkan' cannot be used by this torch \(NotImplementedError: .*\); "
                                         r"use device='cpu' or leave it unset"):
        check_torch_device('vulkan')
