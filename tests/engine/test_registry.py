import subprocess
import sys

import pytest

from docray.engine import registry
from docray.engine.errors import ConfigError
from docray.engine.registry import Registry

OPTIONAL = {"colpali", "openai_http", "triton", "mineru", "vlm", "llm", "cross-encoder",
            "cross_encoder"}


def _all_registries():
    return [(name, r) for name, r in vars(registry).items() if isinstance(r, Registry)]


@pytest.mark.parametrize("reg", [r for _, r in _all_registries()], ids=lambda r: r.kind)
def test_every_entry_resolves_and_satisfies_its_protocol(reg):
    for name in reg.names():
        target = reg.resolve(name)
        assert callable(target), f"{reg.kind}:{name}"
        if reg.protocol is not None and isinstance(target, type):
            missing = [m for m in getattr(reg.protocol, "__annotations__", {})
                       if not m.startswith("_") and not hasattr(target, m)]
            methods = [m for m in dir(reg.protocol) if not m.startswith("_")]
            missing += [m for m in methods if not hasattr(target, m)]
            assert not missing, f"{reg.kind}:{name} lacks {missing}"


def test_unknown_backend_names_the_choices():
    with pytest.raises(ConfigError, match="unknown parser backend 'nope'.*native"):
        registry.PARSERS.resolve("nope")


def test_engine_imports_without_gpu_extras():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'vllm','colpali_engine','flash_attn','faiss',"
        "'tritonclient','triton','mineru'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import docray.engine, docray.engine.config, docray.engine.model, docray.kernels\n"
        "import docray.engine.cli\n"
        "assert 'kernels' not in sys.modules and 'engine' not in sys.modules\n"
        "print('ok')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"
