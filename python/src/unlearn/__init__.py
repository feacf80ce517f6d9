"""The Python client of `unlearn serve`: ingest events, predict, file
deletion requests and verify their signed receipts, publish certified
releases. Standard library only; NumPy arrays are accepted when NumPy is
installed. See docs/service.md.

    client = unlearn.Client("http://127.0.0.1:8080", token, public_key="certifier.pub")
    client.ingest(X, y, keys=emails)
    request = client.forget(keys=["bob@example.com"])
    receipt = request.wait(timeout=600)
"""

from .client import Client, ForgetRequest, PredictionArray, PredictionList
from .errors import (AuthenticationError, BadRequestError, ConflictError, ForbiddenError, InputError,
                     InputTypeError, NoisedModelWarning, NotFoundError, ProblemError, PublicKeyError,
                     ReceiptError, ServiceUnavailable, TooManyRequestsError, UnavailableError, UnlearnError,
                     UnlearnWarning, WaitTimeout)
from .receipt import PublicKey, Receipt, commitment, verify_receipt

__version__ = "0.1.0"

__all__ = [
    "Client", "ForgetRequest", "PublicKey", "Receipt", "commitment", "verify_receipt",
    "UnlearnError", "ProblemError", "BadRequestError", "AuthenticationError", "ForbiddenError",
    "NotFoundError", "ConflictError", "UnavailableError", "TooManyRequestsError", "ReceiptError", "WaitTimeout",
    "InputError", "InputTypeError", "ServiceUnavailable", "PublicKeyError", "UnlearnWarning", "NoisedModelWarning",
    "PredictionArray", "PredictionList",
]
