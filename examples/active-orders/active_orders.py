"""Active orders with a sparse index, after JV Roig's "Infinite Scaling
w/DynamoDB, Part 2: Sparse indexing".

One table holds several "virtual tables" (single-table design): `pk` is the
entity's id, `sk` its type ("order", "customer", ...). Two global secondary
indexes, both partitioned by `sk`:

* GSI1, sorted by `gsi1-sk` (a copy of `pk`): every order;
* GSI2, sorted by `gsi2-sk` (the order's date and time): a *sparse* index.
  Only an active order carries `gsi2-sk`; completing or cancelling an order
  removes the attribute, and DynamoDB drops the order from GSI2. Listing the
  active orders then reads only the active orders, however many inactive
  ones the table holds, sorted by date and time.

Run against any DynamoDB endpoint: `python3 active_orders.py URL`."""

import sys

import boto3
from boto3.dynamodb.conditions import Attr, Key

TABLE = "MySampleApp"
ORDER = "order"


def connect(endpoint_url):
    return boto3.resource(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="rave",
        aws_secret_access_key="rave",
    )


def create_table(dynamodb):
    table = dynamodb.create_table(
        TableName=TABLE,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "gsi1-sk", "AttributeType": "S"},
            {"AttributeName": "gsi2-sk", "AttributeType": "S"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "GSI1",
                "KeySchema": [
                    {"AttributeName": "sk", "KeyType": "HASH"},
                    {"AttributeName": "gsi1-sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "GSI2",
                "KeySchema": [
                    {"AttributeName": "sk", "KeyType": "HASH"},
                    {"AttributeName": "gsi2-sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists()
    return table


def place_order(table, order_id, customer, date_time):
    """A new order is active: it carries `gsi2-sk`, so GSI2 holds it."""
    table.put_item(
        Item={
            "pk": order_id,
            "sk": ORDER,
            "gsi1-sk": order_id,
            "gsi2-sk": date_time,
            "Customer": customer,
            "DateTime": date_time,
            "Status": "active",
        },
        ConditionExpression="attribute_not_exists(pk)",
    )


def close_order(table, order_id, status):
    """Delivered or cancelled: the attribute must go, not be emptied, for
    GSI2 to drop the order."""
    table.update_item(
        Key={"pk": order_id, "sk": ORDER},
        UpdateExpression="SET #status = :status REMOVE #active",
        ConditionExpression="attribute_exists(#active)",
        ExpressionAttributeNames={"#status": "Status", "#active": "gsi2-sk"},
        ExpressionAttributeValues={":status": status},
    )


def _all_pages(query, **kwargs):
    items, scanned, units = [], 0, 0.0
    while True:
        page = query(ReturnConsumedCapacity="TOTAL", **kwargs)
        items.extend(page["Items"])
        scanned += page["ScannedCount"]
        units += page["ConsumedCapacity"]["CapacityUnits"]
        if "LastEvaluatedKey" not in page:
            return items, scanned, units
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def active_orders(table, when_prefix=None):
    """Active orders from GSI2, oldest first; `when_prefix` narrows them to a
    year, a month, a day or an hour ("2022-07-17 08"). Returns the orders,
    how many items the query read, and the capacity units it cost."""
    condition = Key("sk").eq(ORDER)
    if when_prefix:
        condition = condition & Key("gsi2-sk").begins_with(when_prefix)
    return _all_pages(table.query, IndexName="GSI2", KeyConditionExpression=condition)


def active_orders_by_filter(table):
    """The approach the article replaces: every order from GSI1, filtered.
    DynamoDB reads (and charges for) all of them."""
    return _all_pages(
        table.query,
        IndexName="GSI1",
        KeyConditionExpression=Key("sk").eq(ORDER),
        FilterExpression=Attr("Status").eq("active"),
    )


if __name__ == "__main__":
    table = create_table(connect(sys.argv[1]))
    place_order(table, "0001", "Ana", "2022-07-17 08:15")
    place_order(table, "0002", "Ben", "2022-07-17 09:30")
    close_order(table, "0002", "delivered")
    orders, scanned, _ = active_orders(table)
    for order in orders:
        print(order["pk"], order["DateTime"], order["Customer"])
    print(f"{len(orders)} active orders, {scanned} items read")
