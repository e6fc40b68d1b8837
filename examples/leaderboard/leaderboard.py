"""A game leaderboard kept by a stream aggregator, after "Building
aggregations with DynamoDB Streams" (the Cloud Adventure game).

Players submit paths; each valid path is an item `pk` = player, `sk` = path.
An aggregator reads the table's stream (NEW_AND_OLD_IMAGES, from
TRIM_HORIZON) and keeps the leaderboard in the same table, under the
partition `AGGREGATES`, with `ADD` (which creates an item that does not exist
yet):

* `TOTAL_PATHS_FOUND` — paths found by all players together;
* `<X>_PATHS_FOUND` — players who have found at least X paths (1 to 12);
* `TOTAL_PLAYERS` — players with at least one path.

A player's paths beyond the twelfth are stored but not counted. The
aggregator's own updates come back on the stream; it skips every record that
is not the insertion of a submitted path, or it would loop forever.

One change from the article: it counts a player's paths with a Query when it
processes the record, which is right only if it processes each record before
the player's next submission. Here the count is of the player's paths
submitted up to and including this one (by `submitted_at`, then path), so a
lagging aggregator counts the same.

Run against any DynamoDB endpoint: `python3 leaderboard.py URL`."""

import sys
import time

import boto3
from boto3.dynamodb.conditions import Key

TABLE = "ResultsTable"
AGGREGATES = "AGGREGATES"
MAX_PATHS = 12


def settings(endpoint_url):
    return dict(
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="rave",
        aws_secret_access_key="rave",
    )


def create_table(dynamodb):
    table = dynamodb.create_table(
        TableName=TABLE,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists()
    return table


def submit_path(table, player, path):
    """Stores a valid path once; a path already found is refused."""
    table.put_item(
        Item={
            "pk": player,
            "sk": path,
            "user_submitted_path": path,
            "submitted_at": time.time_ns(),
        },
        ConditionExpression="attribute_not_exists(pk)",
    )


def leaderboard(table):
    """Every aggregate in one query, as the game's front end reads them."""
    items = table.query(KeyConditionExpression=Key("pk").eq(AGGREGATES))["Items"]
    return {item["sk"]: int(item["data_value"]) for item in items}


class Aggregator:
    """Reads the table's one shard from the oldest record on, as the
    article's Lambda trigger does (TRIM_HORIZON)."""

    def __init__(self, dynamodb, streams):
        self.table = dynamodb.Table(TABLE)
        self.streams = streams
        arn = self.table.latest_stream_arn
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]
        self.iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]

    def process_batch(self, batch_size=10):
        """Aggregates the next batch of records; returns how many it read."""
        page = self.streams.get_records(ShardIterator=self.iterator, Limit=batch_size)
        for record in page["Records"]:
            self.aggregate(record)
        self.iterator = page["NextShardIterator"]
        return len(page["Records"])

    def drain(self):
        while self.process_batch():
            pass

    def aggregate(self, record):
        image = record["dynamodb"].get("NewImage", {})
        if record["eventName"] != "INSERT" or "user_submitted_path" not in image:
            return
        player = record["dynamodb"]["Keys"]["pk"]["S"]
        num_paths = self.paths_up_to(player, int(image["submitted_at"]["N"]), image["sk"]["S"])
        if num_paths > MAX_PATHS:
            return
        self.add("TOTAL_PATHS_FOUND")
        self.add(f"{num_paths}_PATHS_FOUND")
        if num_paths == 1:
            self.add("TOTAL_PLAYERS")

    def paths_up_to(self, player, submitted_at, path):
        paths, kwargs = [], {"KeyConditionExpression": Key("pk").eq(player)}
        while True:
            page = self.table.query(**kwargs)
            paths.extend(page["Items"])
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return sum(1 for p in paths if (int(p["submitted_at"]), p["sk"]) <= (submitted_at, path))

    def add(self, aggregate):
        self.table.update_item(
            Key={"pk": AGGREGATES, "sk": aggregate},
            UpdateExpression="ADD data_value :d",
            ExpressionAttributeValues={":d": 1},
            ReturnValues="UPDATED_NEW",
        )


if __name__ == "__main__":
    dynamodb = boto3.resource("dynamodb", **settings(sys.argv[1]))
    streams = boto3.client("dynamodbstreams", **settings(sys.argv[1]))
    table = create_table(dynamodb)
    aggregator = Aggregator(dynamodb, streams)
    for player, paths in {"ana": 3, "ben": 1}.items():
        for n in range(paths):
            submit_path(table, player, f"path-{n}")
    aggregator.drain()
    for name, value in sorted(leaderboard(table).items()):
        print(f"{name}: {value}")
