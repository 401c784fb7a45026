package dev.nodelet.podsource.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value PodSourceComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet pod source",
    description = "Watches the pods of this node and tells every PodListener service about them.")
public @interface PodSourceConfiguration {

  @AttributeDefinition(name = "Listener threads",
      description = "Threads that call the PodListener services; each listener is called by one thread at a time, "
          + "so up to this many minus one slow listeners cannot hold up the others. Idle threads end. 1 to 64.",
      min = "1", max = "64")
  int listener_threads() default 2;
}
