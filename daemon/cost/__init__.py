"""What the agents' tokens cost: the price table, reports by period and session, and the cost
component that answers them from the usage projection."""
