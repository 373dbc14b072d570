/**
 * The table items whose writes can mean a domain event: the stream → publisher mapping's filter, and
 * what `npm run replay -- --aws publisher-failures` hands the publisher again (the failure record names
 * a sequence range, which holds the other items' writes too).
 */
export const publisherStreamEntities = ["routingResult", "runClaim", "dataType"] as const;
