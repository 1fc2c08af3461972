"""Re-record tests/search/data/investigator_cassette.json through litellm's offline mock.

Run from the repository root: ``python -m tests.search.record_cassette``. Rerun it whenever the
prompt or the retry message changes (their text is part of each request's hash).
"""

import os
from pathlib import Path

from primus_lang.search.llm.config import LlmConfig
from tests.search.test_llm import GOOD, ILLEGAL_AND_REFUSED, run

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if __name__ == "__main__":
    path = Path(__file__).parent / "data" / "investigator_cassette.json"
    path.unlink(missing_ok=True)
    mocks = ('Sure! {"proposals": [', GOOD, ILLEGAL_AND_REFUSED)
    result = run(LlmConfig(model="gpt-4o-mini", cassette=path, mock_responses=mocks), evaluations=20)
    print(f"recorded {result.llm_calls} calls to {path}")
