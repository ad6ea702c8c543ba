from pathlib import Path

import pytest

from docray.engine.config import DocrayConfig, config_from_dict, load_config
from docray.engine.errors import ConfigError

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_config_file_validates(path):
    cfg = load_config(path, env={})
    assert isinstance(cfg, DocrayConfig)
    assert cfg.profile == path.stem


def test_local_is_the_offline_default():
    cfg = load_config(CONFIGS / "local.yaml", env={})
    assert (cfg.parse.backend, cfg.embed.text.backend, cfg.synthesize.answerer) == (
        "native", "minilm", "extractive")
    assert cfg.embed.allow_hub_download is False


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match=r"parse\.dip"):
        config_from_dict({"parse": {"dip": 100}})


def test_bad_value_is_named_with_the_value():
    with pytest.raises(ConfigError) as e:
        config_from_dict({"parse": {"dpi": 5}})
    assert "parse.dpi" in str(e.value) and "5" in str(e.value)


def test_env_override_only_through_loader(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("parse: {dpi: 100}\n")
    cfg = load_config(p, env={"DOCRAY__PARSE__DPI": "200", "DOCRAY__PATHS__WORKSPACE": "t1"})
    assert cfg.parse.dpi == 200 and cfg.paths.workspace == "t1"
    assert load_config(p, env={}).parse.dpi == 100


def test_env_override_bad_value_names_field(tmp_path):
    with pytest.raises(ConfigError, match="ocr"):
        load_config(None, env={"DOCRAY__PARSE__OCR": "sometimes"})


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml", env={})
    bad = tmp_path / "bad.yaml"
    bad.write_text("parse: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad, env={})


def test_workspace_name_is_validated():
    with pytest.raises(ConfigError, match="workspace"):
        config_from_dict({"paths": {"workspace": "../etc"}})
