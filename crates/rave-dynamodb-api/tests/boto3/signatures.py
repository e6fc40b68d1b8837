"""boto3 against a rave that verifies Signature V4 with the key rave-key /
rave-secret: the right keys are served, a wrong secret and an unknown key are
refused as DynamoDB refuses them. Usage: signatures.py ENDPOINT_URL."""

import sys

import boto3
from botocore.exceptions import ClientError

endpoint = sys.argv[1]
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"FAILED: {what}")
        sys.exit(1)
    checks += 1


def client(key_id, secret):
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="eu-west-1",
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
    )


signed = client("rave-key", "rave-secret")
signed.create_table(
    TableName="signed",
    AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
    KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    BillingMode="PAY_PER_REQUEST",
)
signed.put_item(TableName="signed", Item={"id": {"S": "one"}, "note": {"S": "signed"}})
read = signed.get_item(TableName="signed", Key={"id": {"S": "one"}})
check(read["Item"]["note"] == {"S": "signed"}, f"the signed client is served: {read}")


def refused(key_id, secret):
    try:
        client(key_id, secret).list_tables()
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200


code, status = refused("rave-key", "wrong-secret")
check((code, status) == ("InvalidSignatureException", 400), f"a wrong secret: {code} {status}")
code, status = refused("someone-else", "rave-secret")
check((code, status) == ("UnrecognizedClientException", 400), f"an unknown key: {code} {status}")
print(f"signatures: {checks} checks passed")
