"""boto3's PartiQL calls against rave's DynamoDB API: execute_statement
(INSERT, SELECT with parameters and pages, UPDATE and DELETE with
RETURNING), batch_execute_statement and execute_transaction, their errors
as boto3 raises them, and the capacity and stream records they leave, the
same as the equivalent calls'. Usage: partiql.py ENDPOINT_URL.

Every check that fails stops the script with a non-zero status; the last
line is a summary."""

import sys

import boto3
from botocore.exceptions import ClientError

ENDPOINT = sys.argv[1]
SETTINGS = dict(
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id="rave",
    aws_secret_access_key="rave",
)
client = boto3.client("dynamodb", **SETTINGS)
streams = boto3.client("dynamodbstreams", **SETTINGS)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"boto3 PartiQL: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


def error_code(call):
    try:
        call()
    except ClientError as error:
        return error.response["Error"]["Code"], error.response
    check(False, "the call was refused")


client.create_table(
    TableName="songs",
    AttributeDefinitions=[
        {"AttributeName": "artist", "AttributeType": "S"},
        {"AttributeName": "n", "AttributeType": "N"},
    ],
    KeySchema=[
        {"AttributeName": "artist", "KeyType": "HASH"},
        {"AttributeName": "n", "KeyType": "RANGE"},
    ],
    BillingMode="PAY_PER_REQUEST",
    StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
)

# INSERT, with parameters; a second INSERT of the key is refused.
for n in range(1, 6):
    client.execute_statement(
        Statement="INSERT INTO \"songs\" VALUE {'artist': ?, 'n': ?, 'title': ?}",
        Parameters=[{"S": "acme"}, {"N": str(n)}, {"S": f"song {n}"}],
    )
code, response = error_code(
    lambda: client.execute_statement(
        Statement="INSERT INTO songs VALUE {'artist': 'acme', 'n': 1}"
    )
)
check(code == "DuplicateItemException", f"a taken key: {code}")
check(
    response["Error"]["Message"] == "Duplicate primary key exists in table",
    "DuplicateItemException's message",
)

# SELECT as a Query, two items a page: the pages hold every item once.
seen, token, pages = [], None, 0
while True:
    arguments = dict(
        Statement="SELECT n, title FROM songs WHERE artist = ? AND n >= 2",
        Parameters=[{"S": "acme"}],
        Limit=2,
    )
    if token:
        arguments["NextToken"] = token
    page = client.execute_statement(**arguments)
    pages += 1
    seen += [int(item["n"]["N"]) for item in page["Items"]]
    token = page.get("NextToken")
    if not token:
        break
check(seen == [2, 3, 4, 5], f"the pages' items: {seen}")
check(pages == 3, f"two items a page and an empty last one: {pages}")

# Its capacity is the Query's.
select = client.execute_statement(
    Statement="SELECT * FROM songs WHERE artist = 'acme'",
    ReturnConsumedCapacity="TOTAL",
)
query = client.query(
    TableName="songs",
    KeyConditionExpression="artist = :a",
    ExpressionAttributeValues={":a": {"S": "acme"}},
    ReturnConsumedCapacity="TOTAL",
)
check(
    select["ConsumedCapacity"] == query["ConsumedCapacity"],
    f"SELECT charges as Query: {select['ConsumedCapacity']} {query['ConsumedCapacity']}",
)
check(len(select["Items"]) == 5, "SELECT reads every item of the partition")

# UPDATE and DELETE with RETURNING; an UPDATE never creates an item.
updated = client.execute_statement(
    Statement="UPDATE songs SET plays = 1 SET title = 'renamed' WHERE artist = 'acme' AND n = 1 RETURNING MODIFIED NEW *"
)
check(
    updated["Items"] == [{"plays": {"N": "1"}, "title": {"S": "renamed"}}],
    f"RETURNING MODIFIED NEW *: {updated['Items']}",
)
code, _ = error_code(
    lambda: client.execute_statement(
        Statement="UPDATE songs SET plays = 1 WHERE artist = 'nobody' AND n = 1"
    )
)
check(code == "ConditionalCheckFailedException", f"UPDATE of no item: {code}")
deleted = client.execute_statement(
    Statement="DELETE FROM songs WHERE artist = 'acme' AND n = 5 RETURNING ALL OLD *"
)
check(deleted["Items"][0]["title"] == {"S": "song 5"}, "RETURNING ALL OLD *")

# A batch: each statement answers for itself.
batch = client.batch_execute_statement(
    Statements=[
        {"Statement": "SELECT title FROM songs WHERE artist = 'acme' AND n = 2"},
        {"Statement": "SELECT title FROM songs WHERE artist = 'acme' AND n = 99"},
        {"Statement": "SELECT * FROM songs WHERE artist = 'acme'"},
    ],
    ReturnConsumedCapacity="TOTAL",
)
responses = batch["Responses"]
check(responses[0]["Item"] == {"title": {"S": "song 2"}}, f"a batch read: {responses[0]}")
check("Item" not in responses[1], "a batch read of no item")
check(responses[2]["Error"]["Code"] == "ValidationError", "a batch SELECT of many items")
check(batch["ConsumedCapacity"][0]["TableName"] == "songs", "a batch's capacity")
writes = client.batch_execute_statement(
    Statements=[
        {"Statement": "INSERT INTO songs VALUE {'artist': 'acme', 'n': 2}"},
        {"Statement": "INSERT INTO songs VALUE {'artist': 'other', 'n': 1}"},
    ]
)["Responses"]
check(writes[0]["Error"]["Code"] == "DuplicateItem", f"a batch INSERT of a taken key: {writes[0]}")
check("Error" not in writes[1], "a batch INSERT")

# A transaction commits every statement or none.
client.execute_transaction(
    TransactStatements=[
        {"Statement": "UPDATE songs SET plays = plays + 1 WHERE artist = 'acme' AND n = 1"},
        {"Statement": "DELETE FROM songs WHERE artist = 'other' AND n = 1"},
    ],
    ClientRequestToken="partiql-once",
)
code, response = error_code(
    lambda: client.execute_transaction(
        TransactStatements=[
            {"Statement": "INSERT INTO songs VALUE {'artist': 'new', 'n': 1}"},
            {"Statement": "INSERT INTO songs VALUE {'artist': 'acme', 'n': 2}"},
        ]
    )
)
check(code == "TransactionCanceledException", f"a cancelled transaction: {code}")
reasons = [reason["Code"] for reason in response["CancellationReasons"]]
check(reasons == ["None", "ValidationError"], f"its reasons: {reasons}")
read = client.execute_transaction(
    TransactStatements=[
        {"Statement": "SELECT plays FROM songs WHERE artist = 'acme' AND n = 1"},
        {"Statement": "SELECT * FROM songs WHERE artist = 'new' AND n = 1"},
    ]
)["Responses"]
check(read == [{"Item": {"plays": {"N": "2"}}}, {}], f"a transaction's reads: {read}")

# The stream holds the statements' changes as the item calls' would be.
stream = client.describe_table(TableName="songs")["Table"]["LatestStreamArn"]
shard = streams.describe_stream(StreamArn=stream)["StreamDescription"]["Shards"][0]["ShardId"]
iterator = streams.get_shard_iterator(
    StreamArn=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
)["ShardIterator"]
records = streams.get_records(ShardIterator=iterator)["Records"]
events = [record["eventName"] for record in records]
expected = ["INSERT"] * 5 + ["MODIFY", "REMOVE", "INSERT", "MODIFY", "REMOVE"]
check(events == expected, f"the stream's events: {events}")

print(f"boto3 PartiQL: {checks} checks passed")
