import msgwire

session = msgwire.Session(system_prompt="Be brief.")
session.append(msgwire.user("What's 6 × 7?"))
session.append(msgwire.assistant("42", model="gpt-4o", provider="openai", stop_reason="end_turn"))

data = msgwire.dumps(session)            # bytes: {"version":1,"id":...,"messages":[...]}
again = msgwire.loads(data)              # a Session again; also reads legacy shapes
assert again == session
msgwire.validate(again)                  # raises ValidationError listing every problem

rows = session.to_rows()                 # one row per message, for a database table
assert msgwire.Session.from_rows(rows).messages == session.messages
