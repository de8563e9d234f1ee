"""SmolLM2's vocabulary alone (no weights, no context): the embedded model's exact token counter.

Its ``tokenize(text, add_bos, special)`` counts exactly as the running model does. Loaded once,
by the first count of an embedded text, through the door's registry of local tokenizers
(engine.door.boot.LOCAL_TOKENIZERS), so the door never imports a provider.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from engine.providers import embedded

_lock = threading.Lock()
_vocab: Any = None


def vocab() -> Any:
    """The vocabulary, or None when llama-cpp-python or the weights are not installed."""
    global _vocab
    with _lock:
        if _vocab is not None:
            return _vocab
        try:
            embedded.ensure_available()
            llama_cpp = embedded.llama_cpp_module()
            from llama_cpp._internals import LlamaModel

            params = llama_cpp.llama_model_default_params()
            params.vocab_only = True
            path = str(embedded.model_path())
            _vocab = LlamaModel(path_model=path, params=params, verbose=False)
        except (embedded.EmbeddedModelUnavailable, ValueError):
            return None
        atexit.register(_vocab.close)  # while the interpreter is intact (its __del__ is not)
        return _vocab
