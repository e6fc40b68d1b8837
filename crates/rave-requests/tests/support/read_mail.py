"""Reads the messages an SMTP sink stored (a maildir) as a mail client
would, and prints them as JSON: the decoded headers and both parts."""
import email
import email.policy
import json
import pathlib
import sys

messages = []
for path in sorted(pathlib.Path(sys.argv[1], "new").iterdir(), key=lambda p: p.stat().st_mtime_ns):
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    parts = {part.get_content_type(): part.get_content() for part in message.walk() if not part.is_multipart()}
    messages.append({
        "to": str(message["To"]),
        "from": str(message["From"]),
        "subject": str(message["Subject"]),
        "list_unsubscribe": str(message["List-Unsubscribe"]),
        "list_unsubscribe_post": str(message["List-Unsubscribe-Post"]),
        "text": parts.get("text/plain", ""),
        "html": parts.get("text/html", ""),
    })
print(json.dumps(messages))
