import pytest

from docray.engine.config import PageEncoderConfig
from docray.engine.embed import get_page_encoder
from docray.engine.errors import Unavailable


def test_missing_model_dir_is_unavailable(tmp_path):
    with pytest.raises(Unavailable, match="model_dir"):
        get_page_encoder(PageEncoderConfig(backend="colpali", model_dir=tmp_path / "nope"))
