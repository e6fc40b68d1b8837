"""Checks the leaderboard example against a DynamoDB endpoint: players
submit paths while the aggregator lags behind by random amounts; once it has
read the whole stream, every aggregate equals a recount of the stored paths.
Usage: test_leaderboard.py ENDPOINT_URL."""

import random
import sys

import boto3

from leaderboard import (
    MAX_PATHS,
    Aggregator,
    create_table,
    leaderboard,
    settings,
    submit_path,
)

dynamodb = boto3.resource("dynamodb", **settings(sys.argv[1]))
streams = boto3.client("dynamodbstreams", **settings(sys.argv[1]))
table = create_table(dynamodb)
aggregator = Aggregator(dynamodb, streams)
generator = random.Random(2023)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"leaderboard: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


# Some players pass the twelve counted paths; submissions interleave, and
# the aggregator runs a batch now and then, lagging behind.
wanted = {f"player-{n:02}": generator.randint(1, MAX_PATHS + 3) for n in range(15)}
pending = [(player, n) for player, count in wanted.items() for n in range(count)]
submitted = {player: 0 for player in wanted}
while pending:
    player = generator.choice(sorted({p for p, _ in pending}))
    n = min(n for p, n in pending if p == player)
    pending.remove((player, n))
    submit_path(table, player, f"gem-{n:02}")
    submitted[player] += 1
    if generator.random() < 0.3:
        aggregator.process_batch(generator.randint(1, 10))

try:
    submit_path(table, "player-00", "gem-00")
    check(False, "a path found twice is refused")
except dynamodb.meta.client.exceptions.ConditionalCheckFailedException:
    checks += 1

aggregator.drain()
board = leaderboard(table)
expected = {"TOTAL_PATHS_FOUND": sum(min(c, MAX_PATHS) for c in submitted.values())}
expected["TOTAL_PLAYERS"] = len(submitted)
for x in range(1, MAX_PATHS + 1):
    players = sum(1 for c in submitted.values() if c >= x)
    if players:
        expected[f"{x}_PATHS_FOUND"] = players
check(board == expected, f"the aggregates equal a recount:\n{board}\n{expected}")

# The aggregator's own updates are on the stream too, and it skips them.
aggregator.drain()
check(leaderboard(table) == expected, "reading its own updates changes nothing")
print(
    f"leaderboard: {checks} checks passed ({len(submitted)} players, "
    f"{expected['TOTAL_PATHS_FOUND']} counted paths)"
)
