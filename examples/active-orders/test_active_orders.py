"""Checks the active-orders example against a DynamoDB endpoint: the sparse
index holds exactly the active orders, sorted by date and time, and reading
them costs only what they weigh. Usage: test_active_orders.py ENDPOINT_URL."""

import random
import sys

from active_orders import (
    active_orders,
    active_orders_by_filter,
    close_order,
    connect,
    create_table,
    place_order,
)

dynamodb = connect(sys.argv[1])
table = create_table(dynamodb)
generator = random.Random(2022)

# 100 inactive orders for each active one, as in the article's scenario.
orders = {}
for n in range(303):
    order_id = f"{n:04}"
    when = f"2022-07-{generator.randint(10, 20):02} {generator.randint(0, 23):02}:{generator.randint(0, 59):02}"
    place_order(table, order_id, generator.choice(["Ana", "Ben", "Chi"]), when)
    orders[order_id] = when
still_active = set(generator.sample(sorted(orders), 3))
for order_id in orders:
    if order_id not in still_active:
        close_order(table, order_id, generator.choice(["delivered", "cancelled"]))

checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"active orders: FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


found, scanned, units = active_orders(table)
expected = sorted(still_active, key=lambda order_id: (orders[order_id], order_id))
check([o["pk"] for o in found] == expected, f"the active orders, by date and time: {found}")
check(all(o["Status"] == "active" for o in found), "each one is active")
check(scanned == 3, f"the query read only the 3 active orders, not {scanned}")

index = {
    i["IndexName"]: i["ItemCount"]
    for i in dynamodb.meta.client.describe_table(TableName="MySampleApp")["Table"]["GlobalSecondaryIndexes"]
}
check(index == {"GSI1": 303, "GSI2": 3}, f"GSI2 is sparse: {index}")

filtered, filtered_scanned, filtered_units = active_orders_by_filter(table)
check(sorted(o["pk"] for o in filtered) == sorted(still_active), "the filter finds the same orders")
check(filtered_scanned == 303, f"but reads every order: {filtered_scanned}")
check(filtered_units > units, f"and costs more: {filtered_units} > {units}")

day = orders[expected[0]][:10]
on_day = [o["pk"] for o in active_orders(table, day)[0]]
check(on_day == [i for i in expected if orders[i].startswith(day)], f"narrowed to {day}: {on_day}")
check(active_orders(table, "2021")[0] == [], "no active order in 2021")

try:
    close_order(table, expected[0], "delivered")
    close_order(table, expected[0], "delivered")
    check(False, "closing a closed order is refused")
except dynamodb.meta.client.exceptions.ConditionalCheckFailedException:
    checks += 1
check([o["pk"] for o in active_orders(table)[0]] == expected[1:], "a closed order leaves GSI2")

print(f"active orders: {checks} checks passed ({len(orders)} orders, 3 active)")
