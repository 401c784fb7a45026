package dev.nodelet.node.api.internal;

import java.time.Instant;

/**
 * One log record of a container as {@code /containerLogs} serves it.
 *
 * @param sequence the container's own count, which a follower resumes after
 * @param time when the record was logged
 * @param text the line, without its end of line
 */
record LogLine(long sequence, Instant time, String text) {
}
