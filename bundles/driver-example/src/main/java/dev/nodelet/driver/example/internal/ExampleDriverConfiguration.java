package dev.nodelet.driver.example.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** One example driver, a factory configuration of PID {@code dev.nodelet.driver.example}. */
@ObjectClassDefinition(
    name = "Nodelet example DRA driver",
    description = "A DRA driver with one pool of identical devices, as configured here. Each configuration is one"
        + " driver; every change is published as a new snapshot.")
public @interface ExampleDriverConfiguration {

  @AttributeDefinition(name = "Driver name",
      description = "The driver name of the ResourceSlices: a DNS subdomain of at most 63 characters.")
  String driver_name() default "example.nodelet.dev";

  @AttributeDefinition(name = "Pool", description = "The pool name: DNS subdomains separated by '/'.")
  String pool() default "example";

  @AttributeDefinition(name = "Device count", min = "0", max = "10000",
      description = "How many devices the pool has; they are named dev-0, dev-1, ...")
  int device_count() default 4;

  @AttributeDefinition(name = "Attributes", required = false,
      description = "name=value for every device: true/false is a bool, a whole number an int, a semantic version"
          + " (1.2.3) a version, anything else a string.")
  String[] attributes() default {};

  @AttributeDefinition(name = "Capacity", required = false,
      description = "name=quantity for every device, e.g. memory=80Gi.")
  String[] capacity() default {};
}
