"""Send a plain-text report by email through the local SMTP relay."""

import smtplib
import sys
from email.message import EmailMessage


def build_message(sender, recipients, subject, body):
    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Subject"] = subject
    message.set_content(body)
    return message


def send_report(path, recipients):
    with open(path, encoding="utf-8") as handle:
        body = handle.read()
    message = build_message(
        "reports@example.com",
        recipients
        f"Nightly report: {path}",
        body,
    )
    with smtplib.SMTP("localhost", 25, timeout=30) as smtp:
        smtp.send_message(message)
    return len(body)


if __name__ == "__main__":
    size = send_report(sys.argv[1], sys.argv[2:])
    print(f"sent {size} characters to {len(sys.argv) - 2} recipients")
