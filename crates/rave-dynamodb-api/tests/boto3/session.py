"""boto3 against rave's DynamoDB API: create a table, put, query, scan with
segments, transact, read the stream. Usage: session.py ENDPOINT_URL.

Every check that fails stops the script with a non-zero status; the last
line is a summary."""

import sys

import boto3
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

ENDPOINT = sys.argv[1]
SETTINGS = dict(
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id="rave",
    aws_secret_access_key="rave",
)
client = boto3.client("dynamodb", **SETTINGS)
resource = boto3.resource("dynamodb", **SETTINGS)
streams = boto3.client("dynamodbstreams", **SETTINGS)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"boto3: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


def create_table():
    table = resource.create_table(
        TableName="music",
        AttributeDefinitions=[
            {"AttributeName": "artist", "AttributeType": "S"},
            {"AttributeName": "song", "AttributeType": "S"},
            {"AttributeName": "genre", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "artist", "KeyType": "HASH"},
            {"AttributeName": "song", "KeyType": "RANGE"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byGenre",
                "KeySchema": [{"AttributeName": "genre", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    table.wait_until_exists()
    check(table.table_status == "ACTIVE", "the table is ACTIVE")
    check(client.list_tables()["TableNames"] == ["music"], "ListTables names the table")
    return table


def put_and_query(table):
    with table.batch_writer() as batch:
        for artist in ("Nina", "Miles", "Ella"):
            for n in range(10):
                batch.put_item(
                    Item={
                        "artist": artist,
                        "song": f"song-{n:02}",
                        "plays": n * 100,
                        "genre": "jazz" if n % 2 == 0 else "soul",
                    }
                )
    table.put_item(Item={"artist": "Nina", "song": "extra", "plays": 7})
    got = table.get_item(Key={"artist": "Nina", "song": "extra"})
    check(got["Item"]["plays"] == 7, "GetItem reads what PutItem wrote")
    page = table.query(
        KeyConditionExpression=Key("artist").eq("Nina") & Key("song").begins_with("song-0"),
        FilterExpression=Attr("plays").gte(500),
        ScanIndexForward=False,
    )
    songs = [item["song"] for item in page["Items"]]
    check(songs == ["song-09", "song-08", "song-07", "song-06", "song-05"], f"Query in order: {songs}")
    check(page["ScannedCount"] == 10, "the filter counts what it read")
    jazz = table.query(IndexName="byGenre", KeyConditionExpression=Key("genre").eq("jazz"))
    check(jazz["Count"] == 15, "the index holds every even song of each artist")
    updated = table.update_item(
        Key={"artist": "Miles", "song": "song-01"},
        UpdateExpression="ADD plays :one SET #g = :g",
        ExpressionAttributeNames={"#g": "genre"},
        ExpressionAttributeValues={":one": 1, ":g": "fusion"},
        ReturnValues="UPDATED_NEW",
    )
    check(updated["Attributes"] == {"plays": 101, "genre": "fusion"}, f"UPDATED_NEW: {updated}")
    try:
        table.put_item(
            Item={"artist": "Miles", "song": "song-01"},
            ConditionExpression="attribute_not_exists(artist)",
        )
        check(False, "a failed condition raises")
    except ClientError as error:
        code = error.response["Error"]["Code"]
        check(code == "ConditionalCheckFailedException", f"the condition fails as DynamoDB's: {code}")
    try:
        table.put_item(
            Item={"artist": "Miles", "song": "song-01"},
            ConditionExpression="attribute_not_exists(artist)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        check(False, "a failed condition raises")
    except ClientError as error:
        old = error.response.get("Item", {})
        check(
            old.get("song") == {"S": "song-01"} and old.get("plays") == {"N": "101"},
            f"the failed condition hands back the item it saw: {error.response}",
        )


def scan_with_segments(table):
    total = 4
    seen = []
    for segment in range(total):
        kwargs = {"Segment": segment, "TotalSegments": total, "Limit": 3}
        while True:
            page = table.scan(**kwargs)
            seen.extend((item["artist"], item["song"]) for item in page["Items"])
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    check(len(seen) == 31, f"the segments cover 31 items: {len(seen)}")
    check(len(set(seen)) == 31, "no item is in two segments")


def transact():
    client.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": "music",
                    "Item": {"artist": {"S": "Ella"}, "song": {"S": "new"}, "plays": {"N": "0"}},
                    "ConditionExpression": "attribute_not_exists(artist)",
                }
            },
            {
                "Update": {
                    "TableName": "music",
                    "Key": {"artist": {"S": "Ella"}, "song": {"S": "song-00"}},
                    "UpdateExpression": "SET plays = plays + :n",
                    "ExpressionAttributeValues": {":n": {"N": "5"}},
                }
            },
        ]
    )
    try:
        client.transact_write_items(
            TransactItems=[
                {
                    "Delete": {
                        "TableName": "music",
                        "Key": {"artist": {"S": "Ella"}, "song": {"S": "song-01"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": "music",
                        "Key": {"artist": {"S": "Ella"}, "song": {"S": "new"}},
                        "ConditionExpression": "plays > :n",
                        "ExpressionAttributeValues": {":n": {"N": "10"}},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ]
        )
        check(False, "a cancelled transaction raises")
    except ClientError as error:
        reasons = [r["Code"] for r in error.response.get("CancellationReasons", [])]
        check(error.response["Error"]["Code"] == "TransactionCanceledException", "cancelled")
        check(reasons == ["None", "ConditionalCheckFailed"], f"reasons: {reasons}")
        checked = error.response["CancellationReasons"][1].get("Item")
        check(checked == {"artist": {"S": "Ella"}, "song": {"S": "new"}, "plays": {"N": "0"}},
              f"the failed check hands back the item it saw: {checked}")
    read = client.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": "music", "Key": {"artist": {"S": "Ella"}, "song": {"S": "song-00"}}}},
            {"Get": {"TableName": "music", "Key": {"artist": {"S": "Ella"}, "song": {"S": "song-01"}}}},
            {"Get": {"TableName": "music", "Key": {"artist": {"S": "Ella"}, "song": {"S": "none"}}}},
        ]
    )["Responses"]
    check(read[0]["Item"]["plays"] == {"N": "5"}, "the transaction's update is read")
    check("Item" in read[1], "the cancelled delete deleted nothing")
    check("Item" not in read[2], "a missing item reads as nothing")


def read_the_stream():
    arn = client.describe_table(TableName="music")["Table"]["LatestStreamArn"]
    listed = streams.list_streams(TableName="music")["Streams"]
    check([s["StreamArn"] for s in listed] == [arn], "ListStreams names the table's stream")
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    check(description["StreamViewType"] == "NEW_AND_OLD_IMAGES", "the view type is described")
    shard = description["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    events = []
    while True:
        page = streams.get_records(ShardIterator=iterator, Limit=7)
        events.extend(page["Records"])
        if not page["Records"]:
            break
        iterator = page["NextShardIterator"]
    names = [event["eventName"] for event in events]
    check(names.count("INSERT") == 32, f"32 inserts: {names.count('INSERT')}")
    check(names.count("MODIFY") == 2, f"2 modifications: {names.count('MODIFY')}")
    check(all(e["eventSource"] == "aws:dynamodb" for e in events), "every record is DynamoDB's")
    numbers = [int(e["dynamodb"]["SequenceNumber"]) for e in events]
    check(numbers == sorted(set(numbers)), "sequence numbers increase")
    modified = [e for e in events if e["eventName"] == "MODIFY"][0]["dynamodb"]
    check(modified["OldImage"]["plays"] == {"N": "100"}, "the old image")
    check(modified["NewImage"]["plays"] == {"N": "101"}, "the new image")


table = create_table()
put_and_query(table)
scan_with_segments(table)
transact()
read_the_stream()
print(f"boto3 {boto3.__version__}: {checks} checks passed against {ENDPOINT}")
