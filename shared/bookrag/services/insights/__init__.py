"""What readers ask, for the book's owner (`bookrag report`): counts, the sections asked about and voted
down, and the content gaps clustered by topic, read from the question log through the container."""
