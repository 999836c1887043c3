"""Export a torch module or a Stable-Baselines3 model as an ONNX policy file that
:class:`c8env.agents.onnx_policy.OnnxAgent` (``c8env eval model.onnx ...``) plays.

Needs torch, onnx and onnxscript (the ``onnx`` extra, torch installed first).
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from c8env.actions import NUM_ACTIONS
from c8env.agents.onnx_policy import META_KEY, ONNX_INSTALL, MissingExtraError, OnnxAgent
from c8env.observation import OBS_SIZE
from c8env.versions import OBS_SIZES


def _logits_module(model: Any) -> Any:
    """``model`` as a torch module mapping observations to scores: an SB3 model or policy through
    :class:`c8env.agents.sb3_policy.LogitsModule`, any other torch module as is."""
    import torch

    policy = getattr(model, "policy", model)
    try:
        from stable_baselines3.common.policies import BasePolicy
    except ImportError:
        BasePolicy = None  # noqa: N806
    if BasePolicy is not None and isinstance(policy, BasePolicy):
        from c8env.agents.sb3_policy import LogitsModule

        return LogitsModule(policy)
    if isinstance(model, torch.nn.Module):
        return model
    raise ValueError(f"export_onnx takes a torch module (observations -> logits) or an SB3 model, got "
                     f"{type(model).__name__}")


def _input_width(module: Any) -> int:
    """The observation entries a module reads: an SB3 policy's space, else the first ``Linear`` layer's inputs when
    they are an env version's observation size, else the newest version's."""
    import torch

    space = getattr(getattr(module, "policy", None), "observation_space", None)
    if space is not None:
        return int(space.shape[0])
    first = next((layer for layer in module.modules() if isinstance(layer, torch.nn.Linear)), None)
    return first.in_features if first is not None and first.in_features in OBS_SIZES else OBS_SIZE


def export_onnx(model: Any, path: str | Path, metadata: Mapping[str, Any] | None = None, *,
                dynamo: bool = True) -> Path:
    """Write ``model`` as an ONNX policy file that :class:`OnnxAgent` plays; returns the path.

    ``model``: a torch module mapping observations float32[batch, 401] to logits float32[batch, 60], or a
    Stable-Baselines3 model or policy with a ``Box(401)`` observation space (its actor's logits; DQN: its
    Q-values); 245 in place of 401 for a model of env version 0 or 1 (an SB3 model's space, or a module's first
    ``Linear`` layer, says which). The file has input ``observation`` and output ``logits``, a dynamic batch axis, and ``metadata``
    (JSON) under the property ``c8env``. ``dynamo``: torch's ``torch.export`` exporter (needs onnxscript), else
    the older TorchScript one. The written file is checked: onnxruntime's scores on a random batch equal the
    module's (float tolerance)."""
    try:
        import onnx
        import torch
    except ImportError as err:
        raise MissingExtraError(f"exporting to ONNX needs torch and onnx ({err}); install them: {ONNX_INSTALL}") from None
    path = Path(path)
    if path.suffix != ".onnx":
        raise ValueError(f"export_onnx: {str(path)!r} does not end in .onnx")
    module = _logits_module(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.onnx")
    device = next(module.parameters(), torch.empty(0)).device
    width = _input_width(module)
    example = (torch.rand(8, width, generator=torch.Generator().manual_seed(0)) * 3).to(device)
    quiet = logging.getLogger("torch.onnx")  # "torchvision is not installed" and the like
    level, was_training = quiet.level, module.training
    quiet.setLevel(logging.ERROR)
    module.eval()
    try:
        with torch.no_grad():
            expected = module(example)
        if not isinstance(expected, torch.Tensor) or tuple(expected.shape) != (len(example), NUM_ACTIONS):
            shown = list(expected.shape) if isinstance(expected, torch.Tensor) else type(expected).__name__
            raise ValueError(f"export_onnx: the module maps float32[8, {width}] to {shown}; expected a tensor "
                             f"[8, {NUM_ACTIONS}] of logits (wrap it in a module returning just those)")
        options: dict[str, Any] = (
            {"dynamic_shapes": ({0: torch.export.Dim("batch")},), "external_data": False} if dynamo
            else {"dynamic_axes": {"observation": {0: "batch"}, "logits": {0: "batch"}}})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(module, (example,), str(tmp), input_names=["observation"], output_names=["logits"],
                              dynamo=dynamo, verbose=False, **options)
        proto = onnx.load(str(tmp))
        if metadata is not None:
            entry = proto.metadata_props.add()
            entry.key, entry.value = META_KEY, json.dumps(dict(metadata))
        onnx.save(proto, str(tmp))
        expected = expected.float().cpu().numpy()
        got = OnnxAgent(tmp).scores(example.cpu().numpy())
        if not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
            raise ValueError(f"export_onnx: onnxruntime's logits differ from the module's by up to "
                             f"{np.abs(got - expected).max():.3g}")
        tmp.replace(path)
    finally:
        module.train(was_training)
        quiet.setLevel(level)
        tmp.unlink(missing_ok=True)
    return path


__all__ = ["export_onnx"]
