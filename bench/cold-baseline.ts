// The baseline of `npm run bench:cold`: a function holding only the DynamoDB document client.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async () => client;
