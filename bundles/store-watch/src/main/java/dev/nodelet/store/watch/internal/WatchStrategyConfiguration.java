package dev.nodelet.store.watch.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration {@value WatchStrategyComponent#PID}. A change with a value out of range is refused and the last good
 * configuration stays in force.
 */
@ObjectClassDefinition(name = "Nodelet watch store strategy",
    description = "One list+watch per object that registered pods reference.")
public @interface WatchStrategyConfiguration {

  @AttributeDefinition(name = "Resync interval (seconds)",
      description = "How often consumers re-read their objects. An object not read for five resync intervals, and at "
          + "least one minute, stops being watched until it is read again. 1 to 86400.", min = "1", max = "86400")
  long resync_interval_seconds() default 60;

  @AttributeDefinition(name = "Sync wait (milliseconds)",
      description = "How long a get waits for an object's first list before it fails. 1 to 600000.", min = "1",
      max = "600000")
  long sync_wait_millis() default 1000;
}
