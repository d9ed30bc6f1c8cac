"""Sources of generated examples (lmconform.source): previous_response_id programs (chains), single requests valid
and invalid (requests), and the same answers in generated wire forms (streams); what their searches share (search)
and what generated requests are drawn from (bodies, violations)."""
