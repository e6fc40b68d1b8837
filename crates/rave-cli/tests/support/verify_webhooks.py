"""Verifies rave's webhook deliveries with the Standard Webhooks library.

Reads one JSON object per line on standard input: {"secret", "headers",
"body"}; exits non-zero naming the first delivery that does not verify.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook

count = 0
for line in sys.stdin:
    delivery = json.loads(line)
    Webhook(delivery["secret"]).verify(delivery["body"], delivery["headers"])
    count += 1
print(f"verified {count}")
