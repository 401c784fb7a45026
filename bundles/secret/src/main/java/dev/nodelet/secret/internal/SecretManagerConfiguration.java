package dev.nodelet.secret.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value SecretManagerComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet Secret manager",
    description = "Keeps the Secrets that the pods of this node reference.")
public @interface SecretManagerConfiguration {

  @AttributeDefinition(name = "Strategy",
      description = "LDAP filter on the StoreStrategy services to use, e.g. (nodelet.strategy=ttl). While none "
          + "matches, every get asks the API server directly.")
  String strategy_target() default SecretManagerComponent.DEFAULT_STRATEGY;
}
